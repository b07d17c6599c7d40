"""Streams a WAV file through Deepgram's official Python SDK (deepgram-sdk) to a SpeakerSync server.

The SDK is pointed at the server with its own environment setting, as a Deepgram user would point
it at Deepgram; nothing here speaks SpeakerSync's protocol. Prints one JSON object: every message
received (their types), the final words with their speakers, and whether the stream closed cleanly.

    python deepgram_client.py --url ws://127.0.0.1:8080 --key KEY --wav meeting.wav [--speed 4]
"""
import argparse
import json
import sys
import threading
import time
import wave

from deepgram import DeepgramClient
from deepgram.core.events import EventType
from deepgram.environment import DeepgramClientEnvironment


def main() -> int:
    parser = argparse.ArgumentParser()
    parser.add_argument("--url", required=True, help="ws://host:port (the SDK appends /v1/listen)")
    parser.add_argument("--key", required=True)
    parser.add_argument("--wav", required=True, help="16-bit mono PCM WAV")
    parser.add_argument("--speed", type=float, default=1.0, help="times real time (audio is paced)")
    parser.add_argument("--model", default="nova-3")
    args = parser.parse_args()

    http = args.url.replace("ws://", "http://").replace("wss://", "https://")
    environment = DeepgramClientEnvironment(base=http, production=args.url, agent=args.url, agent_rest=http)
    client = DeepgramClient(api_key=args.key, environment=environment)

    with wave.open(args.wav, "rb") as audio:
        if audio.getnchannels() != 1 or audio.getsampwidth() != 2:
            print("the WAV must be 16-bit mono", file=sys.stderr)
            return 2
        rate = audio.getframerate()
        pcm = audio.readframes(audio.getnframes())

    received = []
    errors = []
    done = threading.Event()

    def on_message(message):
        received.append(message.model_dump() if hasattr(message, "model_dump") else message)

    def on_error(error):
        errors.append(str(error))

    with client.listen.v1.connect(model=args.model, encoding="linear16", sample_rate=rate, channels=1,
                                  diarize=True, interim_results=True, punctuate=True,
                                  utterance_end_ms=1000) as connection:
        connection.on(EventType.MESSAGE, on_message)
        connection.on(EventType.ERROR, on_error)
        connection.on(EventType.CLOSE, lambda _: done.set())
        listener = threading.Thread(target=connection.start_listening, daemon=True)
        listener.start()
        chunk = rate // 10 * 2  # 100 ms
        for offset in range(0, len(pcm), chunk):
            connection.send_media(pcm[offset:offset + chunk])
            time.sleep(0.1 / args.speed)
        connection.send_keep_alive()
        connection.send_close_stream()
        listener.join(timeout=120)

    finals = [m for m in received if isinstance(m, dict) and m.get("type") == "Results" and m.get("is_final")]
    words = [w for m in finals for w in m["channel"]["alternatives"][0]["words"]]
    print(json.dumps({
        "types": sorted({m.get("type") for m in received if isinstance(m, dict)}),
        "final_results": len(finals),
        "interim_results": sum(1 for m in received if isinstance(m, dict) and m.get("type") == "Results" and not m.get("is_final")),
        "words": words,
        "speakers": sorted({w["speaker"] for w in words if w.get("speaker") is not None}),
        "request_ids": sorted({m["metadata"]["request_id"] for m in finals}),
        "metadata": [m for m in received if isinstance(m, dict) and m.get("type") == "Metadata"],
        "errors": errors + [m for m in received if isinstance(m, dict) and m.get("type") == "Error"],
        "closed": done.is_set(),
    }))
    return 0


if __name__ == "__main__":
    sys.exit(main())
