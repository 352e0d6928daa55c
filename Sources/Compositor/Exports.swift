// The pure parts live in CompositorCore; whoever uses Compositor sees them too.
@_exported import CompositorCore
