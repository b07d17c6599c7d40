// Sessions running now, polled once a second; one of them followed with its transcript, its speaker
// timeline and its figures (label latency, real-time factor, speakers, chunk time).
import { api } from "./api.js";
import { SpeakerColours, bars, timeline } from "./charts.js";
import { renderSpeakers, renderTranscript, turnsOf } from "./transcript-view.js";

export const format = {
  seconds: (s) => (s == null ? "—" : `${s.toFixed(1)} s`),
  ms: (s) => (s == null ? "—" : `${(s * 1000).toFixed(0)} ms`),
  number: (n, digits = 3) => (n == null ? "—" : n.toFixed(digits)),
  percent: (n) => (n == null ? "—" : `${(n * 100).toFixed(1)}%`),
};

export function metric(name, value) {
  const box = document.createElement("div");
  box.className = "metric";
  box.dataset.metric = name;
  const strong = document.createElement("b");
  strong.textContent = value;
  box.append(strong, document.createTextNode(name));
  return box;
}

/// A table row of text cells; `data` becomes its data-* attributes (what tests and clicks find it by).
export function tableRow(values, data = {}) {
  const row = document.createElement("tr");
  Object.assign(row.dataset, data);
  for (const value of values) {
    const cell = document.createElement("td");
    cell.textContent = value;
    row.append(cell);
  }
  return row;
}

export class LiveTab {
  constructor(state) {
    this.state = state;
    this.body = document.querySelector("#live-table tbody");
    this.empty = document.getElementById("live-empty");
    this.count = document.getElementById("live-count");
    this.detail = document.getElementById("live-detail");
    this.colours = new SpeakerColours();
    this.followed = null;
  }

  /// Polled by the console every second whichever tab is shown (the badge counts sessions).
  async refresh(visible) {
    let sessions;
    try {
      sessions = (await api.get("/v1/sessions")).sessions;
    } catch {
      return;
    }
    this.count.textContent = sessions.length;
    if (!visible) return;
    this.empty.hidden = sessions.length > 0;
    this.body.replaceChildren(...sessions.map((s) => {
      const row = tableRow([s.conversation_id, s.device_id, s.provider, format.seconds(s.audio_seconds), s.word_count, s.unlabelled_word_count,
        s.speaker_count, format.number(s.real_time_factor),
        `${format.ms(s.label_latency_seconds.p50)} / ${format.ms(s.label_latency_seconds.p95)}`, format.ms(s.chunk_seconds.p50)],
        { conversation: s.conversation_id });
      row.onclick = () => { this.followed = s.conversation_id; this.refreshDetail(); };
      return row;
    }));
    if (this.followed) await this.refreshDetail();
  }

  async refreshDetail() {
    let session;
    try {
      session = await api.get(`/v1/sessions/${encodeURIComponent(this.followed)}`);
    } catch (error) {
      if (error.status === 404) document.getElementById("live-title").textContent = `${this.followed} (ended; see Conversations)`;
      return;
    }
    this.detail.hidden = false;
    document.getElementById("live-title").textContent = `${session.conversation_id} · ${session.provider}`;
    showSession(session, {
      metrics: document.getElementById("live-metrics"), chunks: document.getElementById("live-chunks"),
      timeline: document.getElementById("live-timeline"), transcript: document.getElementById("live-transcript"),
    }, this.colours);
  }
}

/// Figures, chunk-time bars, a timeline and the transcript of one live session snapshot.
export function showSession(session, into, colours) {
  into.metrics.replaceChildren(
    metric("audio", format.seconds(session.audio_seconds)),
    metric("words", String(session.word_count)),
    metric("unlabelled words", String(session.unlabelled_word_count)),
    metric("speakers detected", String(session.speaker_count)),
    metric("real-time factor", format.number(session.real_time_factor)),
    metric("words→label p50", format.ms(session.label_latency_seconds.p50)),
    metric("words→label p95", format.ms(session.label_latency_seconds.p95)),
    metric("chunk p50", format.ms(session.chunk_seconds.p50)),
  );
  if (into.chunks) bars(into.chunks, session.recent_chunk_seconds || [], { label: "chunk processing", reference: 0.1 });
  const utterances = session.transcript?.utterances || [];
  timeline(into.timeline, [{ title: session.provider, turns: turnsOf(utterances) }], colours);
  renderTranscript(into.transcript, utterances, colours);
  if (into.speakers) renderSpeakers(into.speakers, session.speakers || [], colours, into.act);
}
