// Stored conversations: a paged list with previews and badges (conversation-list.js); one as transcript, speaker timeline, rename/merge and export,
// and, when more than one provider labelled it (shadow providers, references), two of them side by side.
import { api } from "./api.js";
import { SpeakerColours, timeline } from "./charts.js";
import { ConversationList } from "./conversation-list.js";
import { tableRow } from "./live-tab.js";
import { renderSpeakers, renderTranscript, turnsOf } from "./transcript-view.js";

export class ConversationsTab {
  constructor(state) {
    this.state = state;
    this.list = new ConversationList((id) => this.open(id));
    for (const button of document.querySelectorAll("#conversation-export button")) {
      button.onclick = () => this.export(button.dataset.format);
    }
  }

  async show() { await this.list.load(null); }

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
    await Promise.all([this.showAudio(id), this.showLabellings(id)]);
  }

  /// The stored audio (sessions with store_audio), fetched with the credential into a blob the
  /// player can seek in, and a control to run it through another provider (re-diarization).
  async showAudio(id) {
    const section = document.getElementById("conversation-audio");
    const player = document.getElementById("conversation-player");
    if (player.src) URL.revokeObjectURL(player.src);
    player.removeAttribute("src");
    const audio = await api.blob(`/v1/conversations/${encodeURIComponent(id)}/audio?format=wav`).catch(() => null);
    section.hidden = !audio;
    if (!audio) return;
    player.src = URL.createObjectURL(audio);
    const { providers } = await api.get("/v1/providers");
    const select = document.getElementById("rediarize-provider");
    select.replaceChildren(...providers.filter((p) => p.kind === "plugin" && p.available).map((p) => new Option(p.id, p.id)));
    const status = document.getElementById("rediarize-status");
    status.textContent = "";
    document.getElementById("rediarize-start").onclick = () => this.rediarize(id, select.value, status);
  }

  async rediarize(id, provider, status) {
    try {
      let job = await api.post(`/v1/conversations/${encodeURIComponent(id)}/diarize?provider=${encodeURIComponent(provider)}`);
      status.dataset.status = job.status;
      while (job.status === "queued" || job.status === "running") {
        status.textContent = `${provider}: ${job.status} ${(job.progress * 100).toFixed(0)}%`;
        await new Promise((resolve) => setTimeout(resolve, 500));
        job = await api.get(`/v1/diarization-jobs/${job.id}`);
      }
      status.dataset.status = job.status;
      status.textContent = job.status === "done"
        ? `${provider}: done in ${job.wall_seconds.toFixed(1)} s (RTF ${job.real_time_factor?.toFixed(4) ?? "–"}), ${job.speakers} speakers`
        : `${provider}: failed: ${job.error}`;
      if (job.status === "done") {
        this.list.forget(id);
        await this.showLabellings(id);
      }
    } catch (error) {
      status.dataset.status = "failed";
      status.textContent = `${error.code}: ${error.message}`;
    }
  }

  /// The comparison: pickers for two labellings, the pairs' scores, both timelines in one chart and
  /// both transcripts side by side. Hidden when the conversation has a single labelling.
  async showLabellings(id) {
    const section = document.getElementById("conversation-compare");
    const { labellings } = await api.get(`/v1/conversations/${encodeURIComponent(id)}/labellings`);
    section.hidden = labellings.length < 2;
    if (section.hidden) return;
    const names = labellings.map((l) => l.name);
    const left = document.getElementById("compare-left"), right = document.getElementById("compare-right");
    const live = labellings.find((l) => l.source === "live")?.name ?? names[0];
    const reference = labellings.find((l) => l.source === "reference")?.name;
    left.replaceChildren(...names.map((n) => new Option(n, n, false, n === (reference ?? live))));
    right.replaceChildren(...names.map((n) => new Option(n, n, false, n === names.find((m) => m !== left.value))));
    left.onchange = right.onchange = () => this.compare(id);
    await this.compare(id);
  }

  async compare(id) {
    const a = document.getElementById("compare-left").value, b = document.getElementById("compare-right").value;
    const path = `/v1/conversations/${encodeURIComponent(id)}`;
    const [comparison, left, right] = await Promise.all([
      api.get(`${path}/compare?providers=${encodeURIComponent([...new Set([a, b])].filter((n) => !n.startsWith("reference:")).join(","))}` +
        (a.startsWith("reference:") ? `&reference=${encodeURIComponent(a.slice("reference:".length))}` : "")).catch((error) => ({ error })),
      api.get(`${path}/transcript?format=json&provider=${encodeURIComponent(a)}`),
      api.get(`${path}/transcript?format=json&provider=${encodeURIComponent(b)}`),
    ]);
    const byName = new Map([...(comparison.labellings ?? []), ...(comparison.reference ? [comparison.reference] : [])].map((l) => [l.name, l]));
    const format = (value, digits = 1) => (value == null ? "–" : `${(value * 100).toFixed(digits)}%`);
    const latency = (l) => (l?.label_latency_seconds?.p50 == null ? "–" : `${(l.label_latency_seconds.p50 * 1000).toFixed(0)} / ${(l.label_latency_seconds.p95 * 1000).toFixed(0)} ms`);
    const rows = (comparison.pairs ?? []).map((pair) => {
      const hypothesis = byName.get(pair.hypothesis);
      return tableRow([`${pair.reference} → ${pair.hypothesis}`, format(pair.der), format(pair.der_no_collar),
        `${format(pair.word_agreement)} (${pair.words_same_speaker}/${pair.words_compared})`,
        `${byName.get(pair.reference)?.speakers ?? "?"} / ${hypothesis?.speakers ?? "?"}`,
        hypothesis?.real_time_factor == null ? "–" : hypothesis.real_time_factor.toFixed(4), latency(hypothesis)], { pair: `${pair.reference}|${pair.hypothesis}` });
    });
    document.querySelector("#compare-pairs tbody").replaceChildren(...rows);
    // Each side its own colours: their labels are their own, "Speaker 1" on the left is not the right's.
    const leftColours = new SpeakerColours(), rightColours = new SpeakerColours();
    timeline(document.getElementById("compare-timeline"), [
      { title: a, turns: turnsOf(left.utterances) }, { title: b, turns: turnsOf(right.utterances) },
    ], new SpeakerColours());
    document.getElementById("compare-left-title").textContent = a;
    document.getElementById("compare-right-title").textContent = b;
    renderTranscript(document.getElementById("compare-left-transcript"), left.utterances, leftColours);
    renderTranscript(document.getElementById("compare-right-transcript"), right.utterances, rightColours);
  }

  async change(label, body) {
    try {
      await api.post(`/v1/conversations/${encodeURIComponent(this.id)}/speakers/${encodeURIComponent(label)}`, body);
    } catch (error) {
      alert(`${error.code}: ${error.message}`);
    }
    this.list.forget(this.id);
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
