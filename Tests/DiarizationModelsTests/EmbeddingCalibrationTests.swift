import Testing
@testable import DiarizationModels

@Suite struct EmbeddingCalibrationTests {
    @Test func separatedDistributionsHaveNoErrorAndAThresholdBetweenThem() throws {
        let same = (0 ..< 100).map { 0.1 + Double($0) * 0.002 }        // 0.100 ... 0.298
        let different = (0 ..< 100).map { 0.7 + Double($0) * 0.002 }   // 0.700 ... 0.898
        let calibration = try #require(EmbeddingCalibration(sameDistances: same, differentDistances: different))
        #expect(calibration.equalErrorRate == 0)
        #expect(calibration.equalErrorDistance >= 0.298 && calibration.equalErrorDistance < 0.7)
        #expect(abs(calibration.sameMedian - 0.199) < 1e-9)
        #expect(abs(calibration.differentMedian - 0.799) < 1e-9)
        #expect(abs(calibration.onePercentFalseAcceptDistance - 0.70198) < 1e-9)
    }

    @Test func aTunedThresholdKeepsItsPlaceAmongTheOtherModelsDistances() throws {
        // The reference model: same 0.0-0.2, different 0.3-0.5; the other: same 0.2-0.6, different 0.7-1.1.
        let steps: [Double] = (0 ..< 100).map { Double($0) }
        let referenceSame: [Double] = steps.map { $0 * 0.002 }
        let referenceDifferent: [Double] = steps.map { 0.3 + $0 * 0.002 }
        let modelSame: [Double] = steps.map { 0.2 + $0 * 0.004 }
        let modelDifferent: [Double] = steps.map { 0.7 + $0 * 0.004 }
        let reference = try #require(EmbeddingCalibration(sameDistances: referenceSame, differentDistances: referenceDifferent))
        let model = try #require(EmbeddingCalibration(sameDistances: modelSame, differentDistances: modelDifferent))
        // The reference's same-voice median maps to the model's; its different-voice median to the model's.
        #expect(abs(model.matched(0.1, from: reference) - 0.4) < 0.005)
        #expect(abs(model.matched(0.4, from: reference) - 0.9) < 0.005)
        // Between the distributions (every same pair within, no different pair): between the model's.
        let gap = model.matched(0.25, from: reference)
        #expect(gap >= 0.596 && gap <= 0.7)
        let thresholds = model.thresholds(matching: ["speaker": 0.4, "enrolled": 0.1], of: reference)
        #expect(thresholds["speaker"]! > thresholds["enrolled"]!)
        #expect(thresholds.keys.sorted() == ["enrolled", "speaker"])
    }

    @Test func overlappingDistributionsMeetAtTheEqualErrorPoint() throws {
        // Same: 0.0 ... 0.99, different: 0.5 ... 1.49 (uniform): errors are equal at t = 0.745, 25 % each.
        let same = (0 ..< 100).map { Double($0) * 0.01 }
        let different = (0 ..< 100).map { 0.5 + Double($0) * 0.01 }
        let calibration = try #require(EmbeddingCalibration(sameDistances: same, differentDistances: different))
        #expect(abs(calibration.equalErrorRate - 0.25) <= 0.01)
        #expect(abs(calibration.equalErrorDistance - 0.745) <= 0.01)
    }

    @Test func oneKindOfPairAloneCannotCalibrate() {
        #expect(EmbeddingCalibration(sameDistances: [0.1, 0.2], differentDistances: []) == nil)
        #expect(EmbeddingCalibration(sameDistances: [], differentDistances: [0.9]) == nil)
    }

    @Test func cosineDistanceIsZeroForOneDirectionAndOneForOrthogonal() {
        #expect(abs(EmbeddingCalibration.cosineDistance([1, 2, 3], [2, 4, 6])) < 1e-9)
        #expect(abs(EmbeddingCalibration.cosineDistance([1, 0], [0, 5]) - 1) < 1e-9)
        #expect(EmbeddingCalibration.cosineDistance([0, 0], [1, 1]) == 1)
    }
}
