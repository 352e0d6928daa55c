import Foundation

/// The document WebKit renders for a web widget: the user's page in an iframe of the widget's size at the top left of
/// a fixed viewport, and the script that drives it from outside. Resizing is the iframe's (the page's CSS re-lays it,
/// its scripts keep their state); the CasparCG calls (`update`, `play`, `next`, `stop`, `remove`, any other by name)
/// are made on the page's window (a page from elsewhere gets them as `message` events: a browser lets no other
/// origin call into it); `window.pipcompose` tells the page its size, the viewers and the playback state. Every second
/// the script reports that it is alive (a page stuck in a loop stops it, as it shares the page's thread), and it
/// reports a page that does not finish loading, that navigated elsewhere, and its errors.
enum PageWrapper {
    struct Options {
        var inner: String
        /// The page is served from the same origin (a file of the scene, inline HTML): calls go straight in.
        var sameOrigin: Bool
        var size: PixelSize
        var report: String
        /// JSON for the page's `update(data)` once it has loaded, and then `play()`.
        var data: String?
        var loadTimeout: Double = 30
        var state: String
    }

    static func html(_ o: Options) -> String {
        """
        <!doctype html><html><head><meta charset="utf-8"><title>pipcompose web widget</title><style>
        html,body{margin:0;background:transparent;overflow:hidden}
        iframe{position:absolute;left:0;top:0;border:0;background:transparent}
        </style></head><body>
        <iframe id="page" sandbox="allow-scripts allow-same-origin allow-forms" allowtransparency="true"
          style="width:\(o.size.width)px;height:\(o.size.height)px" src="\(attribute(o.inner))"></iframe>
        <script>
        "use strict";
        (() => {
          const frame = document.getElementById("page");
          const reportTo = \(literal(o.report));
          const sameOrigin = \(o.sameOrigin);
          const expected = new URL(\(literal(o.inner)), location.href).href;
          const data = \(o.data.map(literal) ?? "null");
          let state = \(o.state);
          let loaded = false;
          const report = (o) => {
            try { fetch(reportTo, { method: "POST", body: JSON.stringify(o), keepalive: true }).catch(() => {}); }
            catch (e) {}
          };
          const page = () => { try { return frame.contentWindow; } catch (e) { return null; } };
          function publish() {
            const w = page();
            if (!w) return;
            if (sameOrigin) {
              try {
                w.pipcompose = Object.assign(w.pipcompose || {}, state);
                w.dispatchEvent(new w.CustomEvent("pipcompose", { detail: state }));
              } catch (e) {}
            } else {
              w.postMessage({ pipcompose: "state", state: state }, "*");
            }
          }
          function call(id, name, arg) {
            const w = page();
            if (!w) return report({ kind: "called", id, name, error: "the page is not there" });
            if (!sameOrigin) {
              w.postMessage({ pipcompose: name, data: arg }, "*");
              return report({ kind: "called", id, name, posted: true });
            }
            let fn;
            try { fn = w[name]; } catch (e) { return report({ kind: "called", id, name, error: String(e) }); }
            if (typeof fn !== "function") {
              return report({ kind: "called", id, name, error: "the page has no function " + name + "()" });
            }
            try {
              if (arg === undefined || arg === null) fn.call(w); else fn.call(w, arg);
              report({ kind: "called", id, name, ok: true });
            } catch (e) {
              report({ kind: "called", id, name, error: name + "() threw " + (e && e.name ? e.name + ": " + e.message : String(e)) });
            }
          }
          window.__pc = {
            resize(w, h) {
              frame.style.width = w + "px";
              frame.style.height = h + "px";
              state.width = w; state.height = h;
              publish();
            },
            call,
            state(s) { Object.assign(state, s); publish(); },
            reload() { loaded = false; checkFound(); frame.src = expected; },
          };
          frame.addEventListener("load", () => {
            loaded = true;
            const w = page();
            if (sameOrigin && w) {
              try {
                if (w.location.href !== expected) return report({ kind: "fail", reason: "the page went to " + w.location.href });
                w.addEventListener("error", (e) => report({ kind: "error", message: "the page's script failed: " + e.message }));
              } catch (e) {}
            }
            publish();
            if (data !== null) call("load", "update", data);
            if (sameOrigin && w && typeof w.play === "function") call("load", "play");
            report({ kind: "loaded" });
          });
          // A page of the scene's that is missing answers 404 in its frame: said, not shown as if it were the page.
          function checkFound() {
            if (!sameOrigin) return;
            fetch(expected, { cache: "no-store" }).then((r) => {
              if (r.status >= 400) report({ kind: "fail", reason: "the page answered " + r.status + " (" + expected + ")" });
            }).catch(() => {});
          }
          checkFound();
          setTimeout(() => {
            if (!loaded) report({ kind: "fail", reason: "the page did not finish loading within \(Int(o.loadTimeout)) s" });
          }, \(Int(o.loadTimeout * 1000)));
          setInterval(() => {
            let href = null;
            if (sameOrigin) { try { href = page().location.href; } catch (e) {} }
            report({ kind: "alive", href });
          }, 1000);
        })();
        </script></body></html>
        """
    }

    /// A JSON string literal, which is also a JavaScript one (with the two line separators escaped).
    static func literal(_ text: String) -> String {
        let data = (try? JSONEncoder().encode(text)) ?? Data("\"\"".utf8)
        return String(decoding: data, as: UTF8.self)
            .replacingOccurrences(of: "\u{2028}", with: "\\u2028").replacingOccurrences(of: "\u{2029}", with: "\\u2029")
            .replacingOccurrences(of: "</", with: "<\\/")
    }

    static func attribute(_ text: String) -> String {
        text.replacingOccurrences(of: "&", with: "&amp;").replacingOccurrences(of: "\"", with: "&quot;")
            .replacingOccurrences(of: "<", with: "&lt;")
    }
}
