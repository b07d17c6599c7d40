import Foundation
import Logging
import SpeakerManager
import Synchronization
import DeterministicRandom

/// A clock the test moves by hand, so every timestamp the manager writes is known.
final class ManualClock: Sendable {
    static let start = Date(timeIntervalSince1970: 1_750_000_000)
    private let current = Mutex(ManualClock.start)

    var now: Date { current.withLock { $0 } }

    func advance(seconds: Double) { current.withLock { $0 = $0.addingTimeInterval(seconds) } }

    var function: @Sendable () -> Date { { self.now } }
}

let quietLogger: Logger = {
    var logger = Logger(label: "test.speaker-manager")
    logger.logLevel = .critical
    return logger
}()

func makeManager(_ config: SpeakerManagerConfig = .default, clock: ManualClock = ManualClock()) throws
    -> SpeakerManager
{
    try SpeakerManager(config: config, logger: quietLogger, clock: clock.function)
}

let dimension = SpeakerManagerConfig.default.embeddingDimension

/// Synthetic embeddings: random directions, and directions at a chosen cosine distance from another.
struct EmbeddingFactory {
    var generator: SeededRandom
    let dimension: Int

    init(seed: UInt64, dimension: Int = SpeakerManagerConfig.default.embeddingDimension) {
        generator = SeededRandom(seed: seed)
        self.dimension = dimension
    }

    /// Uniform on the sphere (normalised Gaussian, Box–Muller), scaled so inputs are not already unit length.
    mutating func randomDirection(scale: Float = 3) -> [Float] {
        var values = [Double](repeating: 0, count: dimension)
        for index in values.indices {
            let u1 = Double.random(in: Double.ulpOfOne..<1, using: &generator)
            let u2 = Double.random(in: 0..<1, using: &generator)
            values[index] = (-2 * log(u1)).squareRoot() * cos(2 * Double.pi * u2)
        }
        let norm = values.reduce(0) { $0 + $1 * $1 }.squareRoot()
        return values.map { Float($0 / norm) * scale }
    }

    /// A vector whose cosine distance to `base` is `distance` (up to Float rounding): `base` turned toward
    /// a random orthogonal direction.
    mutating func direction(atDistance distance: Double, from base: [Float]) -> [Float] {
        let unitBase = unit(base)
        var other = unit(randomDirection())
        let projection = zip(other, unitBase).reduce(0) { $0 + $1.0 * $1.1 }
        other = unit(zip(other, unitBase).map { $0 - projection * $1 })
        let cosine = 1 - distance
        let sine = max(0, 1 - cosine * cosine).squareRoot()
        return zip(unitBase, other).map { Float(cosine * $0 + sine * $1) }
    }

    func unit(_ vector: [Float]) -> [Double] { unit(vector.map(Double.init)) }

    func unit(_ vector: [Double]) -> [Double] {
        let norm = vector.reduce(0) { $0 + $1 * $1 }.squareRoot()
        return vector.map { $0 / norm }
    }
}

/// The distance the manager will compute between a stored profile created from `a` and an input `b`:
/// both go through the same normalisation, so thresholds set to this value sit exactly on the boundary.
func managerDistance(_ a: [Float], _ b: [Float]) throws -> Float {
    try SpeakerUtilities.cosineDistance(
        SpeakerUtilities.normalizedEmbedding(a, dimension: a.count),
        SpeakerUtilities.normalizedEmbedding(b, dimension: b.count))
}

func unitFloat(_ vector: [Float]) throws -> [Float] {
    try SpeakerUtilities.normalizedEmbedding(vector, dimension: vector.count)
}

/// Standard basis vector `index` of the configured dimension: exact arithmetic for tie tests.
func basis(_ index: Int, dimension: Int = SpeakerManagerConfig.default.embeddingDimension) -> [Float] {
    var vector = [Float](repeating: 0, count: dimension)
    vector[index] = 1
    return vector
}

func maxAbsDifference(_ a: [Float], _ b: [Float]) -> Float {
    zip(a, b).reduce(0) { max($0, abs($1.0 - $1.1)) }
}

func norm(_ vector: [Float]) -> Double {
    vector.reduce(0) { $0 + Double($1) * Double($1) }.squareRoot()
}
