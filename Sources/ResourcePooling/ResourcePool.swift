import Foundation

/// Expensive, single-user resources shared by a provider's sessions (sherpa-onnx offline diarizers,
/// Falcon engines): made as needed up to `maximum`, each lent to one caller at a time and kept for the
/// next; callers wait while all are busy. A provider makes the first beforehand (`init(first:…)`), so a
/// resource that cannot be made fails its load, not a session; the speech recognisers are made on
/// first use (`init(maximum:make:)`). Sendable: `idle` and `made` are touched only while `condition`
/// is locked, and a lent resource belongs to one caller until it is given back.
public final class ResourcePool<Resource, Failure: Error>: @unchecked Sendable {
    private let make: () throws(Failure) -> Resource
    public let maximum: Int
    private let condition = NSCondition()
    private var idle: [Resource]
    private var made: Int

    public init(first: Resource, maximum: Int, make: @escaping () throws(Failure) -> Resource) {
        self.make = make
        self.maximum = max(1, maximum)
        idle = [first]
        made = 1
    }

    /// A pool that makes nothing until it is first used (a server that never needs the resource never
    /// pays for it); a failure to make one is the caller's, and the next call tries again.
    public init(maximum: Int, make: @escaping () throws(Failure) -> Resource) {
        self.make = make
        self.maximum = max(1, maximum)
        idle = []
        made = 0
    }

    /// Resources made so far (counting one being made), lent out or idle.
    public var madeCount: Int {
        condition.lock()
        defer { condition.unlock() }
        return made
    }

    /// `body` with a resource of the pool's; the resource goes back afterwards, whatever happens.
    public func withResource<R>(_ body: (Resource) throws(Failure) -> R) throws(Failure) -> R {
        let resource = try take()
        defer { giveBack(resource) }
        return try body(resource)
    }

    private func take() throws(Failure) -> Resource {
        condition.lock()
        while idle.isEmpty && made >= maximum { condition.wait() }
        if let resource = idle.popLast() {
            condition.unlock()
            return resource
        }
        made += 1
        condition.unlock()
        do {
            return try make()
        } catch {
            condition.lock()
            made -= 1
            condition.signal()
            condition.unlock()
            throw error
        }
    }

    private func giveBack(_ resource: Resource) {
        condition.lock()
        idle.append(resource)
        condition.signal()
        condition.unlock()
    }
}
