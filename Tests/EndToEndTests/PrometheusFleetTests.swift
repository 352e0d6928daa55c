import Foundation
import Testing
import TestSupport

/// The rules in deploy/prometheus, used as they are.
let prometheusRules = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent()
    .deletingLastPathComponent().appendingPathComponent("deploy/prometheus/pipcompose-rules.yml").path

extension EndToEnd {
    /// Probes export while they run, and Debian's Prometheus aggregates them: a fleet's figures from its query API.
    @Suite struct PrometheusFleetTests {
        /// A Prometheus query's vector as (labels, value).
        static func query(_ port: Int, _ promQL: String) -> [([String: String], Double)] {
            var allowed = CharacterSet.alphanumerics
            allowed.insert(charactersIn: "-_.~")
            let q = promQL.addingPercentEncoding(withAllowedCharacters: allowed) ?? promQL
            let r = rawHTTP(port: port, "GET /api/v1/query?query=\(q) HTTP/1.1\nHost: 127.0.0.1:\(port)\n")
            guard let body = r.text.range(of: "\r\n\r\n").map({ String(r.text[$0.upperBound...]) }),
                  let json = try? JSONSerialization.jsonObject(with: Data(body.utf8)) as? [String: Any],
                  let data = json["data"] as? [String: Any], let result = data["result"] as? [[String: Any]] else { return [] }
            return result.compactMap { item in
                guard let metric = item["metric"] as? [String: String], let value = item["value"] as? [Any],
                      let text = value.last as? String, let v = Double(text) else { return nil }
                return (metric, v)
            }
        }

        /// Waits for a query to give a result `ok` accepts, polling Prometheus; the last result.
        static func waitFor(_ port: Int, _ promQL: String, timeout: TimeInterval,
                            _ ok: ([([String: String], Double)]) -> Bool) -> [([String: String], Double)] {
            var last: [([String: String], Double)] = []
            poll(until: { last = query(port, promQL); return ok(last) }, timeout: timeout, every: 0.5)
            return last
        }

        /// Which exported latency bucket a value in seconds falls in.
        static func bucket(_ seconds: Double) -> Int {
            let bounds = [0.0005, 0.001, 0.002, 0.003, 0.004, 0.005, 0.006, 0.007, 0.008, 0.010, 0.012, 0.015, 0.020,
                          0.025, 0.033, 0.050, 0.075, 0.100, 0.150, 0.250, 0.500, 1, 2.5, 5, 10]
            return bounds.firstIndex { seconds <= $0 } ?? bounds.count
        }

        @Test func aFleetsLatencyComesFromPrometheusAndAProbeThatDiesAlerts() throws {
            let dir = try TempDir()
            let (server, url) = try startLive([examples + "/timecode.yaml"])
            let u = try #require(url)
            let port = try #require(URL(string: u)?.port)
            let relay = try LiveProcess("/usr/bin/python3", [fixture("tcp_relay.py"), "--target", "127.0.0.1:\(port)",
                                                             "--port", "0", "--delay-ms", "50"])
            let relayPort = try #require(relay.waitForLine { $0.hasPrefix("listening ") }?.split(separator: " ").last)
            let token = UUID().uuidString + UUID().uuidString
            let tokenFile = try dir.write("token", token)
            chmod(tokenFile, 0o600)
            let relayed = "rtsp://127.0.0.1:\(relayPort)/pip"
            let began = Date()
            let runs: [(name: String, url: String, transport: String)] = [("tcp", u, "tcp"), ("udp", u, "udp"),
                                                                           ("relay", relayed, "tcp")]
            var probes: [String: LiveProcess] = [:]
            var targets: [String] = []
            for r in runs {
                let p = try LiveProcess(binary, ["probe", r.url, "--transport", r.transport, "--json", "--metrics", "127.0.0.1:0"],
                                        environment: ["PIPCOMPOSE_METRICS_TOKEN": token])
                let line = try #require(p.waitForLine { $0.hasPrefix("metrics: ") }, "\(p.allOutput)")
                let address = try #require(URL(string: String(line.dropFirst("metrics: ".count))))
                targets.append("127.0.0.1:\(try #require(address.port))")
                probes[r.name] = p
            }
            // A soak of two viewers of the same stream and no stream of its own, as a machine of a fleet runs it.
            let soak = try LiveProcess(binary, ["soak", "--viewers-only", u, "--viewers", "2", "--duration", "15",
                                                "--reference", examples + "/timecode.yaml", "--compare-every", "10",
                                                "--report", dir.file("soak"), "--metrics", "127.0.0.1:0"],
                                       environment: ["PIPCOMPOSE_METRICS_TOKEN": token])
            let soakLine = try #require(soak.waitForLine { $0.hasPrefix("metrics: ") }, "\(soak.allOutput)")
            let soakTarget = "127.0.0.1:\(try #require(URL(string: String(soakLine.dropFirst("metrics: ".count)))?.port))"
            targets.append(soakTarget)
            // Only its owner reads a probe's figures: no token, a wrong one, or another Host is refused.
            let metricsPort = try #require(Int(targets[0].split(separator: ":").last ?? ""))
            let noToken = rawHTTP(port: metricsPort, "GET /metrics HTTP/1.1\nHost: 127.0.0.1:\(metricsPort)\n")
            #expect(noToken.status == 401 && noToken.text.contains("credentials_file"), "\(noToken.text)")
            let wrong = rawHTTP(port: metricsPort, "GET /metrics HTTP/1.1\nHost: 127.0.0.1:\(metricsPort)\nAuthorization: Bearer x\n")
            #expect(wrong.status == 401, "\(wrong.text)")
            let rebound = rawHTTP(port: metricsPort, "GET /metrics HTTP/1.1\nHost: evil.example:\(metricsPort)\nAuthorization: Bearer \(token)\n")
            #expect(rebound.status == 403 || rebound.status == 421, "\(rebound.text)")
            let owner = rawHTTP(port: metricsPort, "GET /metrics HTTP/1.1\nHost: 127.0.0.1:\(metricsPort)\nAuthorization: Bearer \(token)\n")
            #expect(owner.status == 200 && owner.text.contains("pipcompose_probe_frames_total"), "\(owner.text)")
            let promPort = freePort()
            let config = try dir.write("prometheus.yml", """
                global: {scrape_interval: 1s, evaluation_interval: 1s}
                rule_files: [\(prometheusRules)]
                scrape_configs:
                  - job_name: pipcompose-probes
                    authorization: {type: Bearer, credentials_file: \(tokenFile)}
                    static_configs:
                      - targets: [\(targets.joined(separator: ", "))]

                """)
            let prometheus = try LiveProcess("/usr/bin/prometheus", [
                "--config.file=\(config)", "--storage.tsdb.path=\(dir.file("data"))",
                "--web.listen-address=127.0.0.1:\(promPort)", "--log.level=warn"])
            defer {
                for p in probes.values { p.signal(SIGKILL); _ = p.waitForExit() }
                soak.signal(SIGKILL)
                _ = soak.waitForExit()
                prometheus.signal(SIGTERM)
                _ = prometheus.waitForExit()
                relay.signal(SIGKILL)
                _ = relay.waitForExit()
                server.signal(SIGINT)
                _ = server.waitForExit()
            }
            // Every probe and soak viewer scraped with the token, each with 300 latencies counted (10 s past its
            // warm-up).
            let counted = Self.waitFor(promPort, "pipcompose_probe_latency_seconds_count", timeout: 90) {
                $0.count == 5 && $0.allSatisfy { $0.1 >= 300 }
            }
            #expect(counted.count == 5 && counted.allSatisfy { $0.1 >= 300 }, "\(counted) \(prometheus.allOutput)")
            let up = Self.query(promPort, "up{job=\"pipcompose-probes\"}")
            #expect(up.count == 4 && up.allSatisfy { $0.1 == 1 }, "\(up)")

            // Each probe's percentiles over the whole run, from the sum of its buckets, as a fleet's are taken.
            let names = Dictionary(uniqueKeysWithValues: zip(targets.prefix(3), runs.map(\.name)))
            func percentile(_ q: Double) -> [String: Double] {
                let rows = Self.query(promPort, "histogram_quantile(\(q), sum by (le, instance) (pipcompose_probe_latency_seconds_bucket))")
                var out: [String: Double] = [:]
                for (labels, v) in rows { if let name = names[labels["instance"] ?? ""] { out[name] = v } }
                return out
            }
            let p50 = percentile(0.5), p99 = percentile(0.99)
            #expect(p50.count == 3 && p99.count == 3, "\(p50) \(p99)")
            // The relay holds every packet 50 ms: its probe reads that much more than the direct one.
            #expect((p50["relay"] ?? 0) - (p50["tcp"] ?? 1) > 0.04, "\(p50)")
            // The fleet's recording rules give figures.
            let fleetP99 = Self.waitFor(promPort, "pipcompose:probe_latency_seconds:p99_1m", timeout: 30) { $0.count == 1 }
            #expect(fleetP99.count == 1 && fleetP99[0].1 > 0, "\(fleetP99)")

            // A probe killed outright: its target goes down, and the alert fires.
            let udp = try #require(probes["udp"])
            probes["udp"] = nil
            udp.signal(SIGKILL)
            _ = udp.waitForExit()
            let firing = Self.waitFor(promPort, "ALERTS{alertname=\"PipcomposeProbeDown\",alertstate=\"firing\"}", timeout: 60) {
                $0.count == 1
            }
            #expect(firing.count == 1, "\(firing)")

            // The probes' own reports agree with Prometheus within one bucket.
            var ownFrames: [String: Int] = [:]
            for name in ["tcp", "relay"] {
                let p = try #require(probes[name])
                probes[name] = nil
                p.signal(SIGINT)
                #expect(p.waitForExit(timeout: 30) == 0, "\(p.allOutput)")
                let own = try ProbeResult(json: p.stdout.joined(separator: "\n"))
                let latency = try #require(own.total["latencyMs"] as? [String: Any], "\(own.total)")
                let ownP50 = try #require(latency["p50"] as? Double) / 1000
                let ownP99 = try #require(latency["p99"] as? Double) / 1000
                #expect(abs(Self.bucket(ownP50) - Self.bucket(p50[name] ?? -1)) <= 1, "\(name): \(ownP50) against \(p50)")
                #expect(abs(Self.bucket(ownP99) - Self.bucket(p99[name] ?? -1)) <= 1, "\(name): \(ownP99) against \(p99)")
                ownFrames[name] = own.int("frames")
            }

            // The fleet's soak report from Prometheus: its charts, and per viewer the frames each counted itself.
            // Its viewers join a stream others watch, so they wait for a spaced key frame and may read a few grey
            // pictures first (unreadable strips: exit status 3); nothing may be dropped or corrupt.
            let soakStatus = soak.waitForExit(timeout: 60)
            #expect(soakStatus == 0 || soakStatus == 3, "\(soak.allOutput)")
            let soakJSON = try #require(FileManager.default.contents(atPath: dir.file("soak/soak.json")))
            let soakOwn = try #require(try JSONSerialization.jsonObject(with: soakJSON) as? [String: Any])
            let soakViewers = try #require(soakOwn["viewers"] as? [[String: Any]])
            let soakFrames = soakViewers.compactMap { ($0["total"] as? [String: Any])?["frames"] as? Int }
            #expect(soakFrames.count == 2 && soakFrames.allSatisfy { $0 > 0 }, "\(soakOwn)")
            let soakTotals = try #require(soakOwn["totals"] as? [String: Any])
            #expect(soakTotals["viewerDropped"] as? Int == 0 && soakTotals["corrupt"] as? Int == 0
                    && (soakTotals["compared"] as? Int ?? 0) > 0, "\(soakTotals)")
            let fleetDir = dir.file("fleet")
            let report = try tool([binary, "soak", "report", "--prometheus", "http://127.0.0.1:\(promPort)",
                                   "--from", String(Int(began.timeIntervalSince1970) - 5), "--to", "now",
                                   "--report", fleetDir])
            // The killed probe's last second and the relay's drops are the fleet's to report: exit 0 or 3.
            #expect(report.status == 0 || report.status == 3, "\(report.out) \(report.err)")
            let html = try String(contentsOfFile: fleetDir + "/soak.html", encoding: .utf8)
            #expect(html.components(separatedBy: "<svg").count - 1 >= 6 && html.contains("polyline"), "\(html.prefix(2000))")
            let fleetJSON = try #require(FileManager.default.contents(atPath: fleetDir + "/soak.json"))
            let fleet = try #require(try JSONSerialization.jsonObject(with: fleetJSON) as? [String: Any])
            let viewers = try #require(fleet["viewers"] as? [[String: Any]])
            #expect(viewers.count == 5, "\(viewers)")
            func frames(at target: String, viewer: Int? = nil) -> Int? {
                viewers.first { v in
                    let url = v["url"] as? String ?? ""
                    return url.hasSuffix("@ \(target)") && (viewer.map { url.contains("viewer \($0) ") } ?? true)
                }.flatMap { ($0["total"] as? [String: Any])?["frames"] as? Int }
            }
            for (name, target) in zip(runs.map(\.name), targets) where name != "udp" {
                #expect(frames(at: target) == ownFrames[name], "\(name): \(viewers) against \(ownFrames)")
            }
            for j in 0..<2 {
                #expect(frames(at: soakTarget, viewer: j) == soakFrames[j], "soak viewer \(j): \(viewers) against \(soakFrames)")
            }
            let totals = try #require(fleet["totals"] as? [String: Any])
            let all = viewers.compactMap { ($0["total"] as? [String: Any])?["frames"] as? Int }.reduce(0, +)
            #expect(totals["viewerFrames"] as? Int == all, "\(totals)")
        }

        /// A run whose recording into a FIFO stalls (its reader holds it and reads nothing): that output's queue drops
        /// frames until it is failed as stuck. A soak report of the run from Prometheus lists those drops as the
        /// output's own, by output, and not as the source's: before, the run's dropped counter (which adds every
        /// output's drops) was read as the source's, and the hour's report failed on a push's drops at its server's
        /// restarts.
        @Test func aRunsOutputDropsAreReportedAsTheOutputsNotTheSources() throws {
            let dir = try TempDir()
            let fifo = dir.file("stalled.ts")
            #expect(mkfifo(fifo, 0o600) == 0)
            let reader = try LiveProcess("/usr/bin/python3", [fixture("fifo_reader.py"), fifo, "--hold", "--pipe-size", "4096"])
            let token = UUID().uuidString + UUID().uuidString
            let tokenFile = try dir.write("token", token)
            chmod(tokenFile, 0o600)
            let began = Date()
            let (run, url) = try startLive([examples + "/timecode.yaml", "--size", "320x180", "--record", fifo,
                                            "--control-token", token])
            let u = try #require(url), c = try #require(controlURL(run))
            let controlPort = try #require(URL(string: c)?.port)
            let probe = try LiveProcess(binary, ["probe", u, "--json", "--metrics", "127.0.0.1:0"],
                                        environment: ["PIPCOMPOSE_METRICS_TOKEN": token])
            let line = try #require(probe.waitForLine { $0.hasPrefix("metrics: ") }, "\(probe.allOutput)")
            let probePort = try #require(URL(string: String(line.dropFirst("metrics: ".count)))?.port)
            let promPort = freePort()
            let config = try dir.write("prometheus.yml", """
                global: {scrape_interval: 1s, evaluation_interval: 1s}
                scrape_configs:
                  - job_name: pipcompose
                    authorization: {type: Bearer, credentials_file: \(tokenFile)}
                    static_configs:
                      - targets: [127.0.0.1:\(controlPort), 127.0.0.1:\(probePort)]

                """)
            let prometheus = try LiveProcess("/usr/bin/prometheus", [
                "--config.file=\(config)", "--storage.tsdb.path=\(dir.file("data"))",
                "--web.listen-address=127.0.0.1:\(promPort)", "--log.level=warn"])
            defer {
                probe.signal(SIGKILL); _ = probe.waitForExit()
                prometheus.signal(SIGTERM); _ = prometheus.waitForExit()
                run.signal(SIGINT); _ = run.waitForExit()
                reader.signal(SIGKILL); _ = reader.waitForExit()
            }
            #expect(reader.waitForLine { $0 == "open" } != nil, "\(reader.allOutput)")
            // The stalled recording is failed as stuck once its queue took nothing for its time; its counts stop.
            let output = "record:\(fifo)"
            #expect(run.waitForLine(timeout: 60) { $0.contains(output) && $0.contains("stuck") } != nil,
                    "\(run.allOutput)")
            func status() -> [String: Any] {
                let r = rawHTTP(port: controlPort, "GET /v1/status HTTP/1.1\nHost: 127.0.0.1:\(controlPort)\nAuthorization: Bearer \(token)\n")
                let body = r.text.range(of: "\r\n\r\n").map { String(r.text[$0.upperBound...]) } ?? ""
                return (try? JSONSerialization.jsonObject(with: Data(body.utf8)) as? [String: Any]) ?? [:]
            }
            let outputs = status()["outputs"] as? [[String: Any]] ?? []
            let dropped = try #require(outputs.first { $0["id"] as? String == output }?["dropped"] as? Int, "\(outputs)")
            #expect(dropped > 0, "\(outputs)")
            // Prometheus has read those drops, and the probe's frames.
            let seen = Self.waitFor(promPort, "pipcompose_output_dropped_total{output=\"\(output)\"}", timeout: 30) {
                $0.first?.1 == Double(dropped)
            }
            #expect(seen.first?.1 == Double(dropped), "\(seen)")
            let counted = Self.waitFor(promPort, "pipcompose_probe_latency_seconds_count", timeout: 30) { ($0.first?.1 ?? 0) >= 30 }
            #expect((counted.first?.1 ?? 0) >= 30, "\(counted) \(probe.allOutput)")
            let report = try tool([binary, "soak", "report", "--prometheus", "http://127.0.0.1:\(promPort)",
                                   "--from", String(Int(began.timeIntervalSince1970) - 5), "--to", "now",
                                   "--report", dir.file("report")])
            #expect(report.status == 0 || report.status == 3, "\(report.out) \(report.err)")
            let json = try #require(FileManager.default.contents(atPath: dir.file("report/soak.json")))
            let soak = try #require(try JSONSerialization.jsonObject(with: json) as? [String: Any])
            let totals = try #require(soak["totals"] as? [String: Any])
            #expect((totals["outputDropped"] as? [String: Int])?[output] == dropped, "\(totals)")
            // The source's drops are what the run's loop and encoders lost, nothing of the output's.
            let late = totals["sourceLate"] as? Int, atEncoders = totals["sourceEncoderDropped"] as? Int
            #expect(late != nil && atEncoders != nil && totals["sourceDropped"] as? Int == (late ?? -1) + (atEncoders ?? -1),
                    "\(totals)")
            #expect(report.out.contains("outputs: \(dropped) frame\(dropped == 1 ? "" : "s") dropped by their own queues (\(output): \(dropped)), not at the sources\nviewers: "),
                    "\(report.out)")
            #expect(!report.err.contains("the sources dropped \(dropped) frames"), "\(report.err)")
        }
    }
}
