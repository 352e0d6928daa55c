import Foundation

/// The script that puts a page on the scene's clock (`pipcompose render`): put in the page right after the agent
/// (`PageWrapper.agent`, whose own timers stay on the wall clock), before any script of the page's. From then on the
/// page's `Date`, `performance.now()`, `document.timeline.currentTime`, `setTimeout`/`setInterval` and
/// `requestAnimationFrame` read and run on a time that moves only when pipcompose steps it, one frame at a time;
/// its CSS animations, transitions and Web Animations are held and set to the same time. A step (`__pcClock.step(n,
/// ms)`) runs the timers that fall due, in order, each at its own time, then the frame's animation callbacks; once
/// WebKit has drawn that state (two of its own animation frames later: the first draws the change, the second comes
/// once that picture was handed on) it reports `stepped`, and the page's process takes the next picture.
///
/// Frame 0 waits for the page's fonts and images first, so that no picture depends on how fast they loaded.
/// An animation is taken to start at the step it is first seen in; one the page had paused when first seen is left
/// alone. The steps are fetched by the page (`StepBoard`), their calls (a cue's `update`…) made in the same task.
enum SceneClockScript {
    /// `start`: the wall time, in Unix milliseconds, the page's `Date` shows at scene time 0; `report`: where the step
    /// is reported (the agent's address).
    static func script(start: Int64, report: String) -> String {
        """
        <script>
        "use strict";
        (() => {
          if (window.__pcClock) return;
          const start = \(start);
          const reportTo = \(PageWrapper.literal(report));
          const stepsFrom = \(PageWrapper.literal(PageServer.stepsURL(report: report)));
          const RealDate = window.Date, realRAF = window.requestAnimationFrame.bind(window);
          const realFetch = window.fetch.bind(window), realSetTimeout = window.setTimeout.bind(window);
          let now = 0;
          // Date: the scene's wall time, unless given one.
          function SceneDate(...a) {
            if (!new.target) return new RealDate(start + Math.floor(now)).toString();
            return a.length === 0 ? new RealDate(start + Math.floor(now)) : new RealDate(...a);
          }
          SceneDate.prototype = RealDate.prototype;
          SceneDate.now = () => start + Math.floor(now);
          SceneDate.parse = RealDate.parse;
          SceneDate.UTC = RealDate.UTC;
          window.Date = SceneDate;
          try { Object.defineProperty(performance, "now", { value: () => now, configurable: true }); } catch (e) {}
          try { Object.defineProperty(document.timeline, "currentTime", { get: () => now, configurable: true }); } catch (e) {}
          // Timers and animation frames, kept here and run by the steps.
          const timers = new Map(), frames = new Map();
          let nextId = 1, order = 0;
          function timer(fn, delay, args, repeat) {
            const id = nextId++, wait = Math.max(0, Number(delay) || 0);
            timers.set(id, { at: now + wait, seq: order++, fn, args, every: repeat ? Math.max(1, wait) : 0 });
            return id;
          }
          window.setTimeout = (fn, delay, ...args) => timer(fn, delay, args, false);
          window.setInterval = (fn, delay, ...args) => timer(fn, delay, args, true);
          window.clearTimeout = window.clearInterval = (id) => { timers.delete(id); };
          window.requestAnimationFrame = (fn) => { const id = nextId++; frames.set(id, fn); return id; };
          window.cancelAnimationFrame = (id) => { frames.delete(id); };
          function run(fn, args) {
            try {
              if (typeof fn === "function") fn(...args); else (0, eval)(String(fn));
            } catch (e) {
              // Reported as the page's error, as a browser would, without stopping the step.
              queueMicrotask(() => { throw e; });
            }
          }
          // Animations: held, and set to the time since the step each was first seen in.
          const seen = new WeakMap();
          function hold() {
            let list = [];
            try { list = document.getAnimations(); } catch (e) { return; }
            for (const a of list) {
              let first = seen.get(a);
              if (first === undefined) {
                if (a.playState === "paused") { seen.set(a, null); continue; }
                first = now;
                seen.set(a, first);
              }
              if (first === null) continue;
              try {
                if (a.playState !== "paused") a.pause();
                a.currentTime = (now - first) * (a.playbackRate || 1);
              } catch (e) {}
            }
          }
          function advance(to) {
            // Timers due by `to`, earliest first (ties in the order they were set), each at its own time; a timer set
            // by one of them runs in this step too when it falls due in it.
            for (let guard = 0; guard < 100000; guard++) {
              let due = null, dueId = 0;
              for (const [id, t] of timers) {
                if (t.at <= to && (due === null || t.at < due.at || (t.at === due.at && t.seq < due.seq))) { due = t; dueId = id; }
              }
              if (due === null) break;
              now = Math.max(now, due.at);
              if (due.every) { due.at += due.every; due.seq = order++; } else timers.delete(dueId);
              run(due.fn, due.args);
            }
            now = to;
            const callbacks = [...frames.values()];
            frames.clear();
            for (const fn of callbacks) run(fn, [now]);
            hold();
          }
          function ready(n) {
            if (n !== 0) return Promise.resolve();
            const images = [...document.images].map((i) => (i.decode ? i.decode().catch(() => {}) : null));
            return Promise.all([document.fonts ? document.fonts.ready : null, ...images]);
          }
          function report(o) {
            try { realFetch(reportTo, { method: "POST", body: JSON.stringify(o), keepalive: true }).catch(() => {}); } catch (e) {}
          }
          // WebKit draws a frame only where something changed, and its animation frames wait for the last frame to
          // be taken: a step that changed nothing would wait for ever. Each step changes a character drawn in no
          // colour in the corner, so there is always a frame, and its picture is the page's own.
          let tick = null, ticks = 0;
          function touch() {
            if (!tick) {
              tick = document.createElement("div");
              tick.setAttribute("aria-hidden", "true");
              tick.style.cssText = "position:fixed;left:0;top:0;width:2px;height:2px;overflow:hidden;color:transparent;"
                + "font:1px monospace;pointer-events:none;z-index:2147483647";
              document.documentElement.appendChild(tick);
            }
            tick.textContent = ticks++ % 2 ? "." : ":";
          }
          const drawn = () => new Promise((done) => realRAF(() => realRAF(done)));
          const pause = () => new Promise((done) => realSetTimeout(done, 100));
          const channel = new MessageChannel(), queued = [];
          channel.port1.onmessage = () => queued.shift()();
          const task = () => new Promise((done) => { queued.push(done); channel.port2.postMessage(0); });
          // The steps, asked for one after another until there are no more (204); a failed request is asked again.
          async function steps() {
            let after = -1;
            for (;;) {
              let answer;
              try { answer = await realFetch(stepsFrom + "?after=" + after, { cache: "no-store" }); } catch (e) { await pause(); continue; }
              if (answer.status === 204) return;
              if (answer.status !== 200) { await pause(); continue; }
              const step = await answer.json();
              // A page started again mid-render: the frames before this one first, with their calls, undrawn, a task
              // apart (as the render's steps are: what a step's promises do is done before the next one).
              if (step.replay) {
                for (let f = 0; f < step.frame; f++) {
                  for (const [name, arg] of step.replay.calls[f] || []) if (window.__pc) window.__pc.call(0, name, arg === null ? undefined : arg);
                  await ready(f);
                  const ms = f * 1000 / step.replay.fps;
                  if (ms > now || f === 0) advance(ms);
                  touch();
                  await task();
                }
              }
              // The calls of the frame first, in the page's own task order; then the time moves.
              for (const [name, arg] of step.calls) if (window.__pc) window.__pc.call(0, name, arg === null ? undefined : arg);
              await ready(step.frame);
              if (step.ms > now || step.frame === 0) advance(step.ms);
              touch();
              // The first animation frame draws the step; the second comes once that picture was taken.
              await drawn();
              report({ kind: "stepped", frame: step.frame });
              after = step.frame;
            }
          }
          window.__pcClock = { steps };
          steps();
        })();
        </script>
        """
    }
}
