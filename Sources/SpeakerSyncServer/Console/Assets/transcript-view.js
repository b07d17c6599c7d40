// A labelled transcript as the console shows it: each speaker in its colour, a marker on words whose
// label the merger was unsure of, and (for conversations) rename and merge in place.

/// Labels below this speaker confidence are marked: 0.5 and under means "taken from a neighbouring
/// turn, not inside one" (see the merger's SpeakerAssignment), the case worth a second look.
export const lowConfidence = 0.5;

export function renderTranscript(container, utterances, colours) {
  const fragment = document.createDocumentFragment();
  if (utterances.length === 0) {
    const empty = document.createElement("p");
    empty.className = "muted";
    empty.textContent = "No words yet.";
    fragment.append(empty);
  }
  for (const utterance of utterances) {
    const line = document.createElement("div");
    line.className = "utterance";
    line.dataset.speaker = utterance.speaker ?? "";
    const who = document.createElement("span");
    who.className = "who-said" + (utterance.speaker == null ? " unlabelled" : "");
    who.textContent = `${utterance.name ?? utterance.speaker ?? "Unknown"}:`;
    who.style.color = colours.colour(utterance.speaker);
    line.append(who);
    for (const word of utterance.words || []) {
      const span = document.createElement("span");
      span.className = "word";
      span.textContent = word.text + " ";
      const confidence = word.speaker_confidence;
      if (word.speaker == null) span.classList.add("unlabelled");
      else if (confidence != null && confidence <= lowConfidence) {
        span.classList.add("low");
        span.title = `speaker label confidence ${confidence.toFixed(2)}`;
      }
      line.append(span);
    }
    if ((utterance.words || []).length === 0) line.append(document.createTextNode(utterance.text));
    fragment.append(line);
  }
  container.replaceChildren(fragment);
}

/// Chips for each active speaker with rename and merge controls; `act(label, body)` posts the change.
export function renderSpeakers(container, speakers, colours, act) {
  const active = speakers.filter((s) => s.merged_into == null);
  const chips = active.map((speaker) => {
    const chip = document.createElement("div");
    chip.className = "speaker-chip";
    chip.dataset.label = speaker.label;
    const swatch = document.createElement("span");
    swatch.className = "swatch";
    swatch.style.background = colours.colour(speaker.label);
    const name = document.createElement("input");
    name.value = speaker.name;
    name.size = 14;
    name.setAttribute("aria-label", `name of ${speaker.label}`);
    const rename = document.createElement("button");
    rename.textContent = "Rename";
    rename.onclick = () => act(speaker.label, { name: name.value.trim() });
    const into = document.createElement("select");
    into.append(new Option("merge into…", ""));
    for (const other of active) if (other.label !== speaker.label) into.append(new Option(other.name, other.label));
    into.onchange = () => into.value && act(speaker.label, { merge_into: into.value });
    chip.append(swatch, document.createTextNode(speaker.label + " "), name, rename, into);
    return chip;
  });
  container.replaceChildren(...chips);
}

/// The turns a transcript implies (utterances of labelled speakers), for the timeline.
export function turnsOf(utterances) {
  return utterances.filter((u) => u.speaker != null).map((u) => ({ speaker: u.speaker, start: u.start, end: u.end }));
}
