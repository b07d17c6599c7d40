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
        #expect(calibration.thresholds["embedding"] == 0.199)
        #expect(calibration.thresholds["enrolled"] == 0.702)
        #expect(calibration.thresholds["speaker"] == calibration.thresholds["cluster"])
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
