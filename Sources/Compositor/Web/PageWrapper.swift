import Foundation

/// The script that drives a web widget's page, and where it lives. A page of the scene (a file, inline HTML) is
/// served with the script put first in it (`agent`, `inject`): WebKit renders the page itself. A page from elsewhere
/// cannot be changed that way: WebKit renders a document of ours (`html`) with the page in an iframe filling the
/// view, and the script drives it from outside (WebKit then draws about half as many frames for the same CPU).
/// Resizing is the view's (PageRenderer): the page's CSS re-lays it, its scripts keep their state. The CasparCG calls (`update`, `play`, `next`, `stop`, `remove`, any other by name)
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
        /// JSON (or `<templateData>` XML) for the page's `update(data)` once it has loaded, and then `play()`
        /// unless the page was stopped (`PageReplay`).
        var data: String?
        var playAtLoad = true
        var loadTimeout: Double = 30
        var state: String
        /// On the scene's clock (`pipcompose render`): the Unix milliseconds the page's `Date` shows at scene time 0.
        var clockStart: Int64?
    }

    /// The document for a page from elsewhere: the page in an iframe, and the script.
    static func html(_ o: Options) -> String {
        """
        <!doctype html><html><head><meta charset="utf-8"><title>pipcompose web widget</title><style>
        html,body{margin:0;background:transparent;overflow:hidden}
        iframe{position:absolute;left:0;top:0;border:0;background:transparent}
        </style></head><body>
        <iframe id="page" sandbox="allow-scripts allow-same-origin allow-forms" allowtransparency="true"
          style="width:\(o.size.width)px;height:\(o.size.height)px" src="\(attribute(o.inner))"></iframe>
        <script>\(script(o, inPage: false))</script></body></html>
        """
    }

    /// The script for a page of the scene, as the first thing in it.
    static func agent(_ o: Options) -> String {
        "<script>\(script(o, inPage: true))</script>"
            + (o.clockStart.map { SceneClockScript.script(start: $0, report: o.report) } ?? "")
    }

    /// `head` put first in `page`: after its doctype when it has one (before it, the page would be laid out in quirks
    /// mode), else at the very start.
    static func inject(_ head: String, into page: String) -> String {
        var i = page.startIndex
        while i < page.endIndex, page[i].isWhitespace || page[i] == "\u{FEFF}" { i = page.index(after: i) }
        if page[i...].prefix(9).lowercased() == "<!doctype", let end = page[i...].firstIndex(of: ">") {
            let after = page.index(after: end)
            return String(page[..<after]) + head + String(page[after...])
        }
        return head + page
    }

    /// The script that drives the page: in it (`inPage`), or from the document around its iframe.
    private static func script(_ o: Options, inPage: Bool) -> String {
        """
        "use strict";
        (() => {
          if (window.__pc) return;
          const inPage = \(inPage);
          const frame = inPage ? null : document.getElementById("page");
          const reportTo = \(literal(o.report));
          const sameOrigin = \(o.sameOrigin);
          const expected = new URL(\(literal(o.inner)), location.href).href;
          // What the page is given when it loads: kept up to date, for a page reloaded in place.
          let data = \(o.data.map(literal) ?? "null");
          let playing = \(o.playAtLoad);
          let state = \(o.state);
          let loaded = false;
          if (inPage) window.pipcompose = Object.assign({}, state);
          const report = (o) => {
            try { fetch(reportTo, { method: "POST", body: JSON.stringify(o), keepalive: true }).catch(() => {}); }
            catch (e) {}
          };
          const page = () => { if (inPage) return window; try { return frame.contentWindow; } catch (e) { return null; } };
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
          // A JSON object's fields over the last ones (as PageReplay keeps them), anything else as it is.
          function merged(old, arg) {
            try {
              const a = JSON.parse(old), b = JSON.parse(arg), plain = (o) => o && typeof o === "object" && !Array.isArray(o);
              if (plain(a) && plain(b)) return JSON.stringify(Object.assign(a, b));
            } catch (e) {}
            return arg;
          }
          function call(id, name, arg) {
            if (name === "update" && arg !== undefined && arg !== null) data = merged(data, arg);
            else if (name === "play") playing = true;
            else if (name === "stop" || name === "remove") playing = false;
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
              if (frame) { frame.style.width = w + "px"; frame.style.height = h + "px"; }
              state.width = w; state.height = h;
              publish();
            },
            call,
            state(s) { Object.assign(state, s); publish(); },
            reload() {
              loaded = false;
              if (inPage) { location.reload(); return; }
              checkFound(); frame.src = expected;
            },
          };
          // In the page, its errors are heard from the start; where it loads from is watched by its process, and a
          // page of the scene that is missing is said by the server.
          if (inPage) window.addEventListener("error", (e) => report({ kind: "error", message: "the page's script failed: " + e.message }));
          (inPage ? window : frame).addEventListener("load", () => {
            loaded = true;
            const w = page();
            if (sameOrigin && w && !inPage) {
              try {
                if (w.location.href !== expected) return report({ kind: "fail", reason: "the page went to " + w.location.href });
                w.addEventListener("error", (e) => report({ kind: "error", message: "the page's script failed: " + e.message }));
              } catch (e) {}
            }
            publish();
            if (data !== null) call("load", "update", data);
            if (playing && sameOrigin && w && typeof w.play === "function") call("load", "play");
            report({ kind: "loaded" });
          });
          // A page of the scene's that is missing answers 404 in its frame: said, not shown as if it were the page.
          function checkFound() {
            if (!sameOrigin || inPage) return;
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
