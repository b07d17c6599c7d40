"""Writes speakerkit's published figures from the reports scripts/publish-figures keeps in docs/measured/:
the descriptors' `measured` texts (speakerkit's and speakerkit.campplus's, a generated Swift file) and README's block between the markers.
Standard library only."""
import argparse
import json
import pathlib

BEGIN = "<!-- measured:begin (scripts/publish-figures writes this block; do not edit) -->"
END = "<!-- measured:end -->"


def percent(report):
    return 100 * report["overall"]["der_collar_0_25"]["error_rate"]


def load(folder, name):
    path = folder / name
    return json.loads(path.read_text()) if path.exists() else None


def evaluations(folder, provider):
    evals = {name: load(folder, f"eval-{provider}-{name}.json") for name in ["synth2", "synth3", "synth4", "ami-dev", "sample"]}
    missing = [name for name, report in evals.items() if report is None]
    if missing:
        raise SystemExit(f"publish_figures: no {provider} eval report for {', '.join(missing)} in {folder}: run scripts/publish-figures")
    return evals


def der_sentence(evals):
    ami = evals["ami-dev"]["overall"]
    return (f"DER (collar 0.25) synthetic 2 / 3 / 4 voices {percent(evals['synth2']):.1f} / {percent(evals['synth3']):.1f} / "
            f"{percent(evals['synth4']):.1f} %, ami-dev {percent(evals['ami-dev']):.1f} % (speaker count exact on "
            f"{ami['files_with_exact_speaker_count']} of {ami['files']}), sample {percent(evals['sample']):.1f} %; "
            f"{ami['real_time_factor']:.3f} CPU s per audio s on ami-dev (eval at full speed, the session's pushes")


def campplus_figures(folder):
    return der_sentence(evaluations(folder, "speakerkit.campplus")) + ")"


def figures(folder):
    evals = evaluations(folder, "speakerkit")
    sessions = load(folder, "sessions-speakerkit.json")
    if sessions is None:
        raise SystemExit(f"publish_figures: no sessions report in {folder}: run scripts/publish-figures")
    commit = (folder / "commit").read_text().strip()
    date = (folder / "date").read_text().strip()
    accuracy = (der_sentence(evals) + "; the overlap segmentation runs on a low-priority thread of its own and is "
                "counted in the sessions' CPU below)")
    levels = []
    for level in sessions["levels"]:
        label = level["label_ms"]
        words = level["words_update_ms"]
        p95 = "–" if label["p95"] is None else (f"{label['p95']:.0f} ms" if label["p95"] < 1000 else f"{label['p95'] / 1000:.1f} s")
        levels.append(f"{level['sessions']} real-time sessions on 2 cores: {level['completed']} of {level['sessions']} completed, "
                      f"labels p95 {p95}, words→update p99 {words['p99']:.0f} ms, "
                      f"{level['cpu_ms_per_session_second']:.1f} ms CPU per session-second"
                      + (f" ({level['cpu_ms_per_session_audio_second']:.1f} per audio second, finalize included)"
                         if level.get("cpu_ms_per_session_audio_second") is not None else "")
                      + (f", final labels p95 {level['finalize_seconds']['p95']:.1f} s after the last audio"
                         if (level.get("finalize_seconds") or {}).get("p95") is not None else "")
                      + (f", {level['final_word_agreement_percent']['mean']:.1f} % of final words on the true speaker "
                         f"(worst session {level['final_word_agreement_percent']['worst']:.1f} %)"
                         if (level.get("final_word_agreement_percent") or {}).get("mean") is not None else ""))
    capacity = "; ".join(levels)
    # What two cores hold at full quality: the lowest level's cost per session (unsaturated there, so
    # nothing deferred or shed) into what its load generator left of the two cores.
    lowest = min(sessions["levels"], key=lambda level: level["sessions"])
    full_quality = None
    if lowest["server_cpu_percent"] < 170 and lowest["cpu_ms_per_session_second"] > 0:
        full_quality = int((200 - lowest["load_generator_cpu_percent"]) / (lowest["cpu_ms_per_session_second"] / 10))
    if sessions.get("load_shedding") == "on":
        # The default since issue 31: say what it trades, beside the figures it produced.
        past = f", about {full_quality} sessions here" if full_quality else ""
        capacity += (f" (load shedding on, the server's default: past its capacity{past}, speakerkit embeds fewer frames "
                     f"live and its overlap segmentation waits for idle CPU; finalize does what was left, up to 120 s of "
                     f"the shed frames' audio per session, and a session whose segmentation falls 60 s behind gives its overlap "
                     f"pass up, so long sessions past capacity get coarser final labels; PostgreSQL's CPU is not counted)")
    source = f"measured {date} at {commit} by scripts/publish-figures; reports in docs/measured/, context in docs/benchmarks.md"
    return accuracy, capacity, source


def swift_file(accuracy, capacity, source, campplus):
    def literal(text):
        return json.dumps(text, ensure_ascii=False)
    return ("// Generated by scripts/publish-figures from docs/measured/; do not edit. Re-run it when what it\n"
            "// measures changes (issue 31: published figures come from a command, never by hand).\n\n"
            "/// speakerkit's measured figures, as the descriptor publishes them.\n"
            "enum SpeakerKitMeasured {\n"
            f"    static let accuracy = {literal(accuracy)}\n"
            f"    static let capacity = {literal(capacity)}\n"
            f"    static let source = {literal(source)}\n"
            "    static let summary = accuracy + \"; \" + capacity + \" (\" + source + \")\"\n"
            "    /// speakerkit.campplus (the vendored CAM++), measured in the same run on the same sets.\n"
            f"    static let campplus = {literal(campplus)}\n"
            "    static let campplusSummary = campplus + \" (\" + source + \")\"\n"
            "}\n")


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--measured", required=True, type=pathlib.Path)
    parser.add_argument("--swift", required=True, type=pathlib.Path)
    parser.add_argument("--readme", required=True, type=pathlib.Path)
    arguments = parser.parse_args()
    accuracy, capacity, source = figures(arguments.measured)
    campplus = campplus_figures(arguments.measured)
    arguments.swift.write_text(swift_file(accuracy, capacity, source, campplus))
    readme = arguments.readme.read_text()
    if BEGIN not in readme or END not in readme:
        raise SystemExit(f"publish_figures: {arguments.readme} has no measured markers")
    head, rest = readme.split(BEGIN, 1)
    _, tail = rest.split(END, 1)
    block = (f"{BEGIN}\n**Measured** (speakerkit, the default provider): {accuracy}. {capacity[0].upper() + capacity[1:]}. "
             f"`speakerkit.campplus` (the vendored CAM++, offered by name beside the default), same sets, same run: {campplus}. "
             f"({source}.)\n{END}")
    arguments.readme.write_text(head + block + tail)
    print(f"wrote {arguments.swift} and {arguments.readme}'s measured block")


if __name__ == "__main__":
    main()
