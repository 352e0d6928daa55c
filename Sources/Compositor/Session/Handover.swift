/// Carries a value made on one thread to another that takes it over: the maker keeps no reference.
///
/// `@unchecked Sendable`: by contract the sending side never touches the value again (a picture copied on the
/// frame-loop thread for a request handler), so no two threads use it at once.
struct Handover<Value>: @unchecked Sendable {
    let value: Value
    init(_ value: Value) { self.value = value }
}
