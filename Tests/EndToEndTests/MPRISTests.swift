import Foundation
import Testing
import TestSupport

/// A private D-Bus session bus and an MPRIS player on it (Tests/Fixtures/mpris_player.py).
final class PlayerOnABus {
    let bus: LiveProcess
    private(set) var player: LiveProcess!
    let address: String

    init() throws {
        bus = try LiveProcess("/usr/bin/dbus-daemon", ["--session", "--nofork", "--print-address=1"])
        address = try #require(bus.waitForLine { $0.hasPrefix("unix:") }, "dbus-daemon: \(bus.allOutput)")
    }

    /// Starts the player; returns once it owns its name on the bus.
    func startPlayer() throws {
        let fixture = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent()
            .appendingPathComponent("Fixtures/mpris_player.py").path
        player = try LiveProcess("/usr/bin/python3", [fixture], environment: ["DBUS_SESSION_BUS_ADDRESS": address])
        _ = try #require(player.waitForLine { $0 == "ready" }, "player: \(player.allOutput)")
    }

    /// Sends a command and waits for its answer.
    func command(_ line: String) {
        answered += 1
        player.send(line)
        #expect(player.waitForLines(count: answered, timeout: 10) { $0 == "ok" },
                "player did not answer '\(line)': \(player.allOutput)")
    }
    private var answered = 0

    deinit {
        player?.signal(SIGKILL)
        bus.signal(SIGKILL)
    }
}

extension EndToEnd {
    @Suite struct MPRISTests {
        @Test func theNowPlayingCardFollowsAMediaPlayerOnTheSessionBus() throws {
            let world = try PlayerOnABus()
            let (p, _) = try startLive([], rtsp: false, environment: ["DBUS_SESSION_BUS_ADDRESS": world.address])
            let c = try #require(controlURL(p))
            #expect(p.waitForLine { $0.contains("mpris: watching the session bus") } != nil, "\(p.allOutput)")
            let events = try LiveProcess(binary, ["ctl", "--control", c, "events"])
            #expect(events.waitForLine { $0.contains("listening for events") } != nil)
            // The player comes after pipcompose, as when someone opens a music app later.
            try world.startPlayer()
            world.command("track Fixture Song|Test Artist|Test Album|180")
            world.command("play")
            #expect(events.waitForLine { $0.contains("playerFound") && $0.contains("fixture") } != nil)
            #expect(events.waitForLine { $0.contains("nowPlayingChanged") && $0.contains("Fixture Song")
                                         && $0.contains("Test Artist") && $0.contains("\"true\"") } != nil,
                    "\(events.allOutput)\n\(p.allOutput)")
            world.command("pause")
            #expect(events.waitForLine { $0.contains("nowPlayingChanged") && $0.contains("\"false\"") } != nil,
                    "\(events.allOutput)")
            // A seek moves the card's position (sent only when the player's position jumps).
            let isPositionUpdate = { (l: String) in l.contains("widgetUpdated") && l.contains("position") }
            let before = events.stdout.filter(isPositionUpdate).count
            world.command("seek 120")
            #expect(events.waitForLines(count: before + 1, isPositionUpdate), "\(events.allOutput)")
            world.command("track Second Song|Other Artist|Other Album|60")
            #expect(events.waitForLine { $0.contains("nowPlayingChanged") && $0.contains("Second Song") } != nil,
                    "\(events.allOutput)")
            events.signal(SIGKILL)
            p.signal(SIGINT)
            #expect(p.waitForExit() == 0)
        }

        @Test func anUnreachableBusIsAWarningAndTheStreamRuns() throws {
            let dir = try TempDir()
            let file = dir.file("out.ts")
            let p = try LiveProcess(binary, ["run", "--no-control", "--size", "320x180", "--duration", "1.5",
                                             "--record", file],
                                    environment: ["DBUS_SESSION_BUS_ADDRESS": "unix:path=\(dir.file("no-bus"))"])
            #expect(p.waitForExit() == 0, "\(p.allOutput)")
            #expect(p.stderr.contains { $0.contains("no now-playing from media players") }, "\(p.allOutput)")
            #expect((try decodedFrames(file) ?? 0) >= 40)
        }
    }
}
