// The live page's pop-out (web/index.html, which pipcompose serves with this file inlined): a Document
// Picture-in-Picture window, the web's "PiP of any UI", holding the video and a compact control strip: play/pause,
// ±15 s, what plays, and the latency line when the scene carries the timecode strip. Its video element is the page's
// own, moved, so the strip reader, the WebRTC session and "follow this window" go on as they were: the floating
// window's size (less the strip) is the size the page asks a picture for. Closing it puts the video back.
//
// Where the API is missing (another browser, a page that is not a secure context) the button opens the video
// element's own Picture-in-Picture instead and says why.
//
// pipPopOut(video, { stage, media, statsLine, say, changed }) returns { window, open(), close(), fallback }:
// window is the pop-out's while it is open (null otherwise), fallback the reason the last open fell back, if it did.
"use strict";

function pipPopOut(video, { stage, media, statsLine, say, changed }) {
  const pop = { window: null, fallback: null, opened: 0, closed: 0 };
  let timer = null;

  const css = `
    :root { color-scheme: dark; font: 13px/1.3 system-ui, sans-serif; }
    html, body { margin: 0; height: 100%; background: #000; color: #e8eef4; overflow: hidden; }
    body { display: flex; flex-direction: column; }
    #pane { flex: 1; min-height: 0; }
    #pane video { width: 100%; height: 100%; object-fit: contain; display: block; background: #000; }
    #strip { flex: none; height: 34px; box-sizing: border-box; display: flex; gap: 6px; align-items: center;
             padding: 0 6px; background: #1a2128; white-space: nowrap; overflow: hidden; }
    button { background: #2c3e50; color: #fff; border: 1px solid #3d566e; border-radius: 4px; padding: 2px 8px;
             cursor: pointer; font: inherit; }
    #line { overflow: hidden; text-overflow: ellipsis; color: #c8d6e5; font-variant-numeric: tabular-nums; }`;

  function build(w) {
    const d = w.document;
    d.title = document.title;
    const style = d.createElement("style");
    style.textContent = css;
    d.head.append(style);
    const pane = d.createElement("div");
    pane.id = "pane";
    pane.append(video);
    const strip = d.createElement("div");
    strip.id = "strip";
    const button = (id, text, title, fn) => {
      const b = d.createElement("button");
      b.id = id; b.textContent = text; b.title = title; b.onclick = fn;
      strip.append(b);
      return b;
    };
    button("toggle", "⏯", "play / pause", () => media.act(media.state === "playing" ? "pause" : "play"));
    button("back", "−15", "back 15 s", () => media.act("seekbackward", { seekOffset: 15 }));
    button("forward", "+15", "forward 15 s", () => media.act("seekforward", { seekOffset: 15 }));
    const line = d.createElement("span");
    line.id = "line";
    strip.append(line);
    d.body.append(pane, strip);
    return { d, line };
  }

  // The strip follows what the page knows, once a second: which buttons work, what plays, the latency.
  function refresh(parts) {
    const d = parts.d, offered = media.offered;
    d.getElementById("toggle").textContent = media.state === "playing" ? "⏸" : "▶";
    for (const [id, action] of [["back", "seekbackward"], ["forward", "seekforward"]])
      d.getElementById(id).style.display = offered.includes(action) ? "" : "none";
    const m = media.metadata, what = m ? [m.title, m.artist].filter((x) => x).join(" · ") : "";
    const latency = statsLine();
    parts.line.textContent = [what, latency].filter((x) => x).join(" — ");
  }

  pop.close = () => { if (pop.window) pop.window.close(); };

  pop.open = async () => {
    if (pop.window) return pop.close();
    if (!("documentPictureInPicture" in window)) {
      pop.fallback = window.isSecureContext
        ? "this browser has no Document Picture-in-Picture: the video alone floats, without the controls"
        : "Document Picture-in-Picture needs a secure page (https, or localhost): the video alone floats, without "
          + "the controls";
      say(pop.fallback);
      if (!document.pictureInPictureEnabled) throw new Error("Picture-in-Picture is not available either");
      await video.requestPictureInPicture();
      return;
    }
    pop.fallback = null;
    const r = video.getBoundingClientRect();
    const w = await documentPictureInPicture.requestWindow({ width: Math.max(240, Math.round(r.width)),
                                                              height: Math.max(135, Math.round(r.height)) + 34 });
    // The page's own PiP window gives way (one floating window at a time).
    if (document.pictureInPictureElement) document.exitPictureInPicture().catch(() => {});
    const parts = build(w);
    pop.window = w;
    pop.opened++;
    refresh(parts);
    timer = setInterval(() => refresh(parts), 1000);
    w.addEventListener("resize", changed);
    w.addEventListener("pagehide", () => {
      clearInterval(timer);
      stage.append(video);
      pop.window = null;
      pop.closed++;
      // The element was paused by the move out of a closing document in some browsers: it plays on in the page.
      video.play().catch(() => {});
      changed();
    });
    changed();
  };
  return pop;
}
