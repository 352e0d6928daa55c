// The live page's Media Session (web/index.html, which pipcompose serves with this file inlined): what the browser's
// Picture-in-Picture window, its media notification and the media keys show and offer. The PiP controller's verbs as
// the browser's own buttons: play and pause, ±15 s, the music's previous and next, and automatic PiP when the tab is
// left.
//
// pipMediaSession(video, { drive, watching, artworkURL }) returns an object the page feeds GET /v1/nowplaying once a
// second (update(np)) and that keeps what it told the browser, for people and for tests (window.pipMedia):
//   metadata   title, artist, album, artwork as set on navigator.mediaSession
//   offered    the actions whose handlers are set now (what the PiP window shows as buttons)
//   position   the position state given (a finite scene: its duration and position; a live one: an infinite
//              duration, the seeds' infinite time range, so no scrubber)
//   state      navigator.mediaSession.playbackState as set
//   acted      the actions handled so far, in order
// and act(name, details): the handler the browser would call (a browser's own PiP buttons cannot be clicked by a test;
// the page's pop-out strip calls its buttons through it too).
//
// The owner's buttons drive the run (drive(method, path, body): the control API); a watch link's act on its own player
// only: play and pause stop and start its video, and nothing that moves the run is offered.
"use strict";

function pipMediaSession(video, { drive, watching, artworkURL }) {
  const ms = "mediaSession" in navigator ? navigator.mediaSession : null;
  const media = { supported: !!ms, metadata: null, offered: [], position: null, state: "none", acted: [], np: null,
                  refused: {} };
  const handlers = {};
  let shown = "", offeredKey = "";

  function handle(name, fn) {
    handlers[name] = fn;
    if (!ms) return;
    try { ms.setActionHandler(name, fn ? (details) => media.act(name, details) : null); }
    catch (e) { media.refused[name] = String(e); delete handlers[name]; }
  }

  media.act = (name, details = {}) => {
    const fn = handlers[name];
    if (!fn) return false;
    media.acted.push(name);
    fn(details);
    return true;
  };

  // What the owner's buttons call: the run's own verbs; the buttons show the new state once the run took it. Play
  // also plays this page's video, should it have stopped.
  const run = (path, body, then = () => {}) => () => drive("POST", path, body).then(then).catch(() => {});
  const playing = (yes) => () => { if (media.np) media.np.playing = yes; media.refresh(); };
  const playRun = () => { video.play().catch(() => {}); run("/v1/play", undefined, playing(true))(); };
  // ±15 s, the seeds' interval and what `ctl skip` does, whatever the browser's icon says (Chromium's shows 10).
  const skip = (sign) => run("/v1/skip", { seconds: sign * 15 });

  function offer(np) {
    const live = { play: true, pause: true, seek: !watching && np.seek, tracks: !watching && np.tracks };
    const key = JSON.stringify(live);
    if (key === offeredKey) return;
    offeredKey = key;
    handle("play", watching ? () => { video.play().catch(() => {}); media.refresh(); } : playRun);
    handle("pause", watching ? () => { video.pause(); media.refresh(); } : run("/v1/pause", undefined, playing(false)));
    handle("seekbackward", live.seek ? skip(-1) : null);
    handle("seekforward", live.seek ? skip(1) : null);
    handle("previoustrack", live.tracks ? run("/v1/skip", { track: "previous" }) : null);
    handle("nexttrack", live.tracks ? run("/v1/skip", { track: "next" }) : null);
    // Automatic PiP: the browser may call it when the viewer switches tabs while the video plays.
    handle("enterpictureinpicture", document.pictureInPictureEnabled
      ? () => { if (!document.pictureInPictureElement) video.requestPictureInPicture().catch(() => {}); } : null);
    media.offered = Object.keys(handlers).filter((n) => handlers[n]);
  }

  // The state the buttons show: the scene's for the owner, the viewer's own player for a watch link.
  media.refresh = () => {
    const np = media.np;
    if (!np) return;
    media.state = watching ? (video.paused ? "paused" : "playing") : (np.playing ? "playing" : "paused");
    if (ms) ms.playbackState = media.state;
  };

  media.update = (np) => {
    media.np = np;
    offer(np);
    const meta = { title: np.title || document.title, artist: np.artist || "", album: np.album || "",
                   artwork: np.artwork ? [{ src: artworkURL(np.artwork), sizes: "512x512", type: "image/png" }] : [] };
    const key = JSON.stringify(meta);
    if (key !== shown) {
      shown = key;
      media.metadata = meta;
      if (ms && typeof MediaMetadata === "function") ms.metadata = new MediaMetadata(meta);
    }
    media.refresh();
    const finite = np.duration !== null && np.duration !== undefined;
    const position = finite ? { duration: np.duration, position: Math.min(np.position, np.duration), playbackRate: 1 }
                            : { duration: Infinity, position: 0, playbackRate: 1 };
    media.position = { ...position, live: !finite };
    try { if (ms && ms.setPositionState) ms.setPositionState(position); } catch (e) { media.refused.position = String(e); }
  };

  video.addEventListener("play", media.refresh);
  video.addEventListener("pause", media.refresh);
  return media;
}
