// pipcompose's timecode strip read in a browser (docs/TIMECODE.md), shared by the live page (web/index.html, which
// pipcompose serves with this file inlined) and the Janus viewer page (web/janus.html, hosted anywhere beside it).
//
// pipWatch(video, { onSize, onSecond }) reads the strip of every frame the video shows and returns the figures it
// keeps: frames read and unreadable, drops and repeats by frame number, glass-to-glass latency (the strip's
// wall-clock time against when the frame is expected on screen) and where that latency goes.
"use strict";
const PIP_CELLS = 57;

function pipCrc8(bytes) {
  let c = 0;
  for (const b of bytes) { c ^= b; for (let i = 0; i < 8; i++) c = (c & 0x80) ? ((c << 1) ^ 0x07) & 0xff : (c << 1) & 0xff; }
  return c;
}

// Two rows of 57 cells: guards, row id, 48 data bits, parity.
function pipDecodeRow(cells) {
  const whites = [cells[0], cells[2], cells[54], cells[56]], blacks = [cells[1], cells[55]];
  if (Math.min(...whites) - Math.max(...blacks) < 40) return null;
  const threshold = (whites.reduce((a, b) => a + b) / 4 + blacks.reduce((a, b) => a + b) / 2) / 2;
  const bits = cells.map((v) => v > threshold);
  if (!bits[0] || bits[1] || !bits[2] || !bits[54] || bits[55] || !bits[56] || bits[3] === bits[4]) return null;
  const data = bits.slice(5, 53);
  if ((data.filter((b) => b).length % 2 === 1) !== bits[53]) return null;
  return { row: bits[3] ? 1 : 0, key: data.map((b) => (b ? "1" : "0")).join("") };
}

// The frame number and wall-clock milliseconds of the picture the video shows now, or null (no strip, or damaged).
function pipReadStrip(video, canvas, ctx) {
  const w = 456, h = Math.max(2, Math.round(w * video.videoHeight / video.videoWidth));
  canvas.width = w; canvas.height = h;
  ctx.drawImage(video, 0, 0, w, h);
  const px = ctx.getImageData(0, 0, w, h).data, cw = w / PIP_CELLS;
  const votes = [new Map(), new Map()];
  for (let y = 0; y < h; y++) {
    const cells = [];
    for (let i = 0; i < PIP_CELLS; i++) {
      const x0 = Math.floor(i * cw + cw * 0.3), x1 = Math.max(x0 + 1, Math.floor(i * cw + cw * 0.7));
      let sum = 0;
      for (let x = x0; x < x1; x++) { const o = (y * w + x) * 4; sum += 0.299 * px[o] + 0.587 * px[o + 1] + 0.114 * px[o + 2]; }
      cells.push(sum / (x1 - x0));
    }
    const r = pipDecodeRow(cells);
    if (r) votes[r.row].set(r.key, (votes[r.row].get(r.key) || 0) + 1);
  }
  const best = (m) => [...m.entries()].filter((e) => e[1] >= 2).sort((a, b) => b[1] - a[1]).slice(0, 3).map((e) => e[0]);
  for (const top of best(votes[0])) for (const bottom of best(votes[1])) {
    const bits = top + bottom, bytes = [];
    for (let i = 0; i < 12; i++) bytes.push(parseInt(bits.slice(i * 8, i * 8 + 8), 2));
    if (pipCrc8(bytes.slice(0, 11)) !== bytes[11]) continue;
    let frame = 0, ms = 0;
    for (const b of bytes.slice(0, 5)) frame = frame * 256 + b;
    for (const b of bytes.slice(5, 11)) ms = ms * 256 + b;
    return { frame, ms };
  }
  return null;
}

const pipPercentile = (v, p) => { if (!v.length) return null; const s = [...v].sort((a, b) => a - b); return s[Math.min(s.length - 1, Math.ceil(p * s.length) - 1)]; };

function pipWatch(video, { onSize = () => {}, onSecond = () => {} } = {}) {
  const canvas = document.createElement("canvas");
  const ctx = canvas.getContext("2d", { willReadFrequently: true });
  const stats = { codec: null, audio: null, frames: 0, readable: 0, unreadable: 0, lastFrame: null, dropped: 0, repeated: 0,
                  latencies: [], fps: 0, width: 0, height: 0, p50: null, p99: null, sizes: [],
                  // Where the latency goes, medians in ms: drawn → its last packet received,
                  // received → decoded and handed to the compositor, handed → expected on screen.
                  parts: { network: null, decode: null, display: null } };
  const partSamples = { network: [], decode: [], display: [] };
  const addPart = (name, ms) => {
    if (!Number.isFinite(ms)) return;
    const v = partSamples[name]; v.push(ms); if (v.length > 3000) v.shift();
  };
  let second = { start: performance.now(), frames: 0 };
  function onFrame(now, meta) {
    stats.frames++;
    if (video.videoWidth !== stats.width || video.videoHeight !== stats.height) {
      stats.width = video.videoWidth; stats.height = video.videoHeight;
      // The last frame number read at the old size: the first read at the new one says how many frames the change
      // cost (`step`: 1 is none lost).
      stats.sizes.push({ width: stats.width, height: stats.height, at: Date.now(), after: stats.lastFrame });
      onSize(stats);
    }
    const shown = performance.timeOrigin + (meta && meta.expectedDisplayTime ? meta.expectedDisplayTime : now);
    const r = video.videoWidth >= PIP_CELLS ? pipReadStrip(video, canvas, ctx) : null;
    if (r) {
      stats.readable++;
      const size = stats.sizes[stats.sizes.length - 1];
      if (size && size.step === undefined && size.after !== null) size.step = r.frame - size.after;
      if (stats.lastFrame !== null) {
        if (r.frame === stats.lastFrame) stats.repeated++;
        else if (r.frame > stats.lastFrame + 1) stats.dropped += r.frame - stats.lastFrame - 1;
      }
      stats.lastFrame = r.frame;
      stats.latencies.push(shown - r.ms);
      if (stats.latencies.length > 3000) stats.latencies.shift();
      if (meta && meta.receiveTime && meta.presentationTime) {
        addPart("network", performance.timeOrigin + meta.receiveTime - r.ms);
        addPart("decode", meta.presentationTime - meta.receiveTime);
        if (meta.expectedDisplayTime) addPart("display", meta.expectedDisplayTime - meta.presentationTime);
      }
    } else stats.unreadable++;
    second.frames++;
    if (now - second.start >= 1000) {
      stats.fps = second.frames * 1000 / (now - second.start);
      second = { start: now, frames: 0 };
      stats.p50 = pipPercentile(stats.latencies, 0.5); stats.p99 = pipPercentile(stats.latencies, 0.99);
      for (const k in partSamples) stats.parts[k] = pipPercentile(partSamples[k], 0.5);
      onSecond(stats);
    }
    video.requestVideoFrameCallback(onFrame);
  }
  video.requestVideoFrameCallback(onFrame);
  return stats;
}

// The line a page shows under its video.
function pipStatsLine(stats) {
  return stats.readable
    ? `latency p50 ${stats.p50.toFixed(1)} ms · p99 ${stats.p99.toFixed(1)} ms · ${stats.fps.toFixed(1)} fps · frame ${stats.lastFrame} · dropped ${stats.dropped}` + (stats.codec ? ` · ${stats.codec}` : "")
    : `${stats.fps.toFixed(1)} fps · no timecode strip in this scene (latency needs one)`;
}
