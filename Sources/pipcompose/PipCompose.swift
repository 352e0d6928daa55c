import ArgumentParser

@main
struct PipCompose: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "pipcompose",
        abstract: "A real-time frame compositor: live widgets drawn with Cairo/Pango into video.",
        subcommands: [RunCommand.self, SnapshotCommand.self, CtlCommand.self, ProbeCommand.self, SoakCommand.self,
                      MendCommand.self, WidgetsCommand.self, WebPageCommand.self, RenderCommand.self]
    )
}
