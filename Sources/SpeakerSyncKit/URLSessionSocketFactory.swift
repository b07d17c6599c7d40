#if canImport(Darwin)
import Foundation
import Synchronization

/// Sockets over `URLSessionWebSocketTask` (iOS, macOS): no libwebsockets on a phone. Not compiled on
/// the Linux machine this package is tested on (docs/client.md says what that leaves unverified).
@available(macOS 15, iOS 18, *)
public final class URLSessionSocketFactory: SessionSocketFactory {
    private let session: URLSession

    public init(configuration: URLSessionConfiguration = .default) {
        session = URLSession(configuration: configuration)
    }

    public func connect(url: String, headers: [(String, String)], events: @escaping @Sendable (SessionSocketEvent) -> Void) throws -> any SessionSocket {
        guard let target = URL(string: url) else { throw URLError(.badURL) }
        var request = URLRequest(url: target)
        for (name, value) in headers { request.setValue(value, forHTTPHeaderField: name) }
        let task = session.webSocketTask(with: request)
        let socket = Socket(task: task, events: events)
        task.resume()
        // URLSessionWebSocketTask queues sends until its handshake completes and reports a failed one
        // through `receive`, so the session may send its start at once.
        events(.opened)
        socket.receive()
        return socket
    }

    /// Sendable: its stored properties are immutable or atomic, and URLSessionWebSocketTask is
    /// thread-safe (Foundation serialises its calls), though not declared Sendable on every platform.
    private final class Socket: SessionSocket, @unchecked Sendable {
        let task: URLSessionWebSocketTask
        let events: @Sendable (SessionSocketEvent) -> Void
        private let queued = Atomic<Int>(0)

        init(task: URLSessionWebSocketTask, events: @escaping @Sendable (SessionSocketEvent) -> Void) {
            self.task = task
            self.events = events
        }

        func receive() {
            task.receive { [weak self] result in
                guard let self else { return }
                switch result {
                case .success(let message):
                    if case .string(let text) = message { self.events(.text(text)) }
                    self.receive()
                case .failure(let error):
                    // A handshake the server answered with another status than 101 fails the task with
                    // no close code; its HTTP response is kept on the task, so the status (404, 401,
                    // 503…) and Retry-After reach the session as they do from libwebsockets.
                    if self.task.closeCode == .invalid, let response = self.task.response as? HTTPURLResponse,
                       response.statusCode != 101 {
                        self.events(.upgradeRefused(status: response.statusCode, retryAfter: response.value(forHTTPHeaderField: "Retry-After"),
                                                    reason: error.localizedDescription))
                        return
                    }
                    let code = self.task.closeCode == .invalid ? nil : UInt16(self.task.closeCode.rawValue)
                    self.events(.closed(code: code, reason: error.localizedDescription))
                }
            }
        }

        func send(text: String) { send(.string(text), bytes: text.utf8.count) }
        func send(binary: [UInt8]) { send(.data(Data(binary)), bytes: binary.count) }

        private func send(_ message: URLSessionWebSocketTask.Message, bytes: Int) {
            queued.add(bytes, ordering: .relaxed)
            task.send(message) { [weak self] _ in self?.queued.subtract(bytes, ordering: .relaxed) }
        }

        var queuedBytes: Int { queued.load(ordering: .relaxed) }

        func close(code: UInt16, reason: String) {
            task.cancel(with: URLSessionWebSocketTask.CloseCode(rawValue: Int(code)) ?? .normalClosure, reason: Data(reason.utf8))
        }
    }
}
#endif
