// Stored conversations: a paged list; one as transcript, speaker timeline, rename/merge and export.
import { api } from "./api.js";
import { SpeakerColours, timeline } from "./charts.js";
import { tableRow } from "./live-tab.js";
import { renderSpeakers, renderTranscript, turnsOf } from "./transcript-view.js";

export class ConversationsTab {
  constructor(state) {
    this.state = state;
    this.body = document.querySelector("#conversation-table tbody");
    this.more = document.getElementById("conversations-more");
    this.more.onclick = () => this.load(this.cursor);
    for (const button of document.querySelectorAll("#conversation-export button")) {
      button.onclick = () => this.export(button.dataset.format);
    }
  }

  async show() { await this.load(null); }

  async load(cursor) {
    const page = await api.get(`/v1/conversations?limit=20${cursor ? "&cursor=" + encodeURIComponent(cursor) : ""}`);
    const rows = page.conversations.map((c) => {
      const row = tableRow([c.id, c.device_id, c.provider, c.status, `${c.audio_seconds.toFixed(1)} s`, c.ended_at ?? c.started_at ?? ""],
        { conversation: c.id });
      row.onclick = () => this.open(c.id);
      return row;
    });
    if (cursor) this.body.append(...rows); else this.body.replaceChildren(...rows);
    this.cursor = page.next_cursor;
    this.more.hidden = !this.cursor;
  }

  async open(id) {
    this.id = id;
    this.colours = new SpeakerColours();
    const [summary, transcript] = await Promise.all([
      api.get(`/v1/conversations/${encodeURIComponent(id)}`),
      api.get(`/v1/conversations/${encodeURIComponent(id)}/transcript?format=json`),
    ]);
    document.getElementById("conversation-detail").hidden = false;
    document.getElementById("conversation-title").textContent = `${id} · ${summary.provider} · ${summary.status}`;
    for (const s of summary.speakers) this.colours.colour(s.label);
    renderSpeakers(document.getElementById("conversation-speakers"), summary.speakers, this.colours, (label, body) => this.change(label, body));
    timeline(document.getElementById("conversation-timeline"), [{ title: "speakers", turns: turnsOf(transcript.utterances) }], this.colours);
    renderTranscript(document.getElementById("conversation-transcript"), transcript.utterances, this.colours);
  }

  async change(label, body) {
    try {
      await api.post(`/v1/conversations/${encodeURIComponent(this.id)}/speakers/${encodeURIComponent(label)}`, body);
    } catch (error) {
      alert(`${error.code}: ${error.message}`);
    }
    await this.open(this.id);
  }

  /// Fetched with the credential (a link cannot carry it), then saved from a blob.
  async export(format) {
    const text = await api.text(`/v1/conversations/${encodeURIComponent(this.id)}/transcript?format=${format}`);
    const extension = { json: "json", text: "txt", srt: "srt", vtt: "vtt", rttm: "rttm" }[format];
    const link = document.createElement("a");
    link.href = URL.createObjectURL(new Blob([text], { type: "text/plain" }));
    link.download = `${this.id}.${extension}`;
    link.click();
    setTimeout(() => URL.revokeObjectURL(link.href), 1000);
  }
}
