import Foundation
import Testing
import WebSocketTransport

/// Everything one raw WebSocket connection received, in order, until it closed: what a device saw.
struct SessionRecording: Sendable {
    /// The text messages as received (JSON).
    var texts: [String] = []
    var closeCode: UInt16?
    var closeReason: String?

    /// Reads `events` to the end of the connection. A connection that never ends fails the test
    /// after `timeoutSeconds` (an issue naming what was received) instead of hanging the whole run;
    /// the bound is far above any test's need and asserts nothing about speed.
    static func record(_ events: AsyncStream<WebSocketClientEvent>, timeoutSeconds: Double = 300,
                       sourceLocation: SourceLocation = #_sourceLocation) async -> SessionRecording {
        await withTaskGroup(of: SessionRecording?.self) { group in
            group.addTask { await recordToTheEnd(events) }
            group.addTask {
                try? await Task.sleep(for: .seconds(timeoutSeconds))
                return nil
            }
            if let first = await group.next(), let recording = first {
                group.cancelAll()
                return recording
            }
            // The timeout came first: cancelling ends the stream's iteration with what it has.
            group.cancelAll()
            let partial = (await group.next() ?? nil) ?? SessionRecording()
            Issue.record("the connection did not end within \(Int(timeoutSeconds)) s; received \(partial.texts.count) messages, the last: \(partial.texts.last?.prefix(300) ?? "none")",
                         sourceLocation: sourceLocation)
            return partial
        }
    }

    private static func recordToTheEnd(_ events: AsyncStream<WebSocketClientEvent>) async -> SessionRecording {
        var recording = SessionRecording()
        for await event in events {
            switch event {
            case .message(.text(let text)):
                recording.texts.append(text)
            case .disconnected(let code, let reason):
                recording.closeCode = code
                recording.closeReason = reason
                return recording
            default:
                continue
            }
        }
        return recording
    }

    var messages: [[String: Any]] {
        texts.compactMap { (try? JSONSerialization.jsonObject(with: Data($0.utf8))) as? [String: Any] }
    }

    var types: [String] { messages.compactMap { $0["type"] as? String } }

    var errors: [[String: Any]] { messages.filter { $0["type"] as? String == "error" } }

    var errorCodes: [String] { errors.compactMap { $0["code"] as? String } }

    /// Every word any transcript update showed, with whether that update said it was stored.
    var transcriptWords: [(text: String, startSeconds: Double, stored: Bool)] {
        messages.filter { $0["type"] as? String == "transcript" }.flatMap { update in
            (update["upserted"] as? [[String: Any]] ?? []).flatMap { utterance in
                (utterance["words"] as? [[String: Any]] ?? []).compactMap { word in
                    guard let text = word["text"] as? String, let start = (word["start"] as? NSNumber)?.doubleValue else { return nil }
                    return (text, start, word["stored"] as? Bool == true)
                }
            }
        }
    }

    /// The words the device was told are stored (it may delete its own copy of these).
    var acknowledgedWords: Set<String> {
        Set(transcriptWords.filter(\.stored).map(\.text))
    }
}

enum RawMessages {
    static func json(_ object: [String: Any]) -> String {
        String(decoding: try! JSONSerialization.data(withJSONObject: object, options: [.sortedKeys]), as: UTF8.self)
    }

    static func start(device: String = "phone-ack", conversation: String? = nil, provider: String = "device",
                      language: String? = nil) -> String {
        var object: [String: Any] = ["type": "start", "device_id": device, "provider": provider, "sample_rate": 16000, "encoding": "pcm_s16le"]
        if let conversation { object["conversation_id"] = conversation }
        if let language { object["language"] = language }
        return json(object)
    }

    /// A words message whose words are `texts`, 0.3 s apart from `startSeconds`.
    static func words(_ resultID: String, _ texts: [String], from startSeconds: Double) -> String {
        json(["type": "words", "result_id": resultID, "final": true, "words": texts.enumerated().map { index, text in
            ["text": text, "start": startSeconds + Double(index) * 0.3, "end": startSeconds + Double(index) * 0.3 + 0.2]
        }])
    }

    static func segment(_ speaker: String, from start: Double, to end: Double) -> String {
        json(["type": "segments", "segments": [["speaker": speaker, "start": start, "end": end]]])
    }

    static func silence(seconds: Double) -> [UInt8] { [UInt8](repeating: 0, count: Int(seconds * 16_000) * 2) }
}
