import Testing

/// Every end-to-end suite runs inside this one, one test at a time: each starts encoders, servers and
/// clients, and on a 2-core machine running them side by side would make them compete for the CPU (a frame
/// dropped because another test hogged the machine is not what a test should measure).
@Suite(.serialized) struct EndToEnd {}
