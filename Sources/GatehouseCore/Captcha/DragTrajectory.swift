import Foundation

/// One sample of the drag: the slider's offset `x` and the pointer's vertical offset `y` (both in
/// background pixels) at `t` milliseconds after the press.
public struct DragPoint: Sendable, Equatable {
    public let x: Double
    public let y: Double
    public let t: Double

    public init(x: Double, y: Double, t: Double) {
        self.x = x
        self.y = y
        self.t = t
    }
}

/// An answer to a slider puzzle, checked for shape (parameter errors, seed code 1003) on the way in.
public struct DragAnswer: Sendable, Equatable {
    public static let maximumPoints = 1000
    public static let maximumMilliseconds = 60_000.0
    static let maximumOffset = 10_000.0

    /// Where the piece's left edge was dropped, in background pixels.
    public let position: Double
    /// From press to release, in milliseconds.
    public let durationMs: Double
    public let trajectory: [DragPoint]

    public init(position: Double, durationMs: Double, trajectory: [DragPoint]) throws(DomainError) {
        func refuse(_ detail: String, _ field: String) -> DomainError { DomainError(.invalidCaptchaAnswer, detail, field: field) }
        guard position.isFinite, (0...Double(SliderPuzzle.width)).contains(position) else {
            throw refuse("position is the piece's left edge, 0 to \(SliderPuzzle.width) pixels.", "position")
        }
        guard durationMs.isFinite, (0...Self.maximumMilliseconds).contains(durationMs) else {
            throw refuse("durationMs is 0 to \(Int(Self.maximumMilliseconds)) milliseconds.", "durationMs")
        }
        guard (2...Self.maximumPoints).contains(trajectory.count) else {
            throw refuse("trajectory has 2 to \(Self.maximumPoints) points.", "trajectory")
        }
        var previous = -Double.infinity
        for point in trajectory {
            guard point.x.isFinite, point.y.isFinite, point.t.isFinite, abs(point.x) <= Self.maximumOffset, abs(point.y) <= Self.maximumOffset,
                (0...Self.maximumMilliseconds).contains(point.t)
            else { throw refuse("Every trajectory point has finite x and y within ±10000 and t from 0 to 60000 ms.", "trajectory") }
            guard point.t >= previous else { throw refuse("Trajectory times never go backwards.", "trajectory") }
            previous = point.t
        }
        self.position = position
        self.durationMs = durationMs
        self.trajectory = trajectory
    }
}

/// Why a drag did not look like a person's (docs/captcha.md explains each).
public enum RoboticDrag: String, Sendable, Equatable {
    case tooFast = "too_fast"
    case tooSlow = "too_slow"
    case tooFewPoints = "too_few_points"
    case endMismatch = "end_mismatch"
    case durationMismatch = "duration_mismatch"
    case teleport
    case constantSpeed = "constant_speed"
    case ruledLine = "ruled_line"
    case regularTiming = "regular_timing"
    case smoothCurve = "smooth_curve"
    case noCorrection = "no_correction"
}

/// Decides whether a drag looks human. People press, accelerate, slow down near the gap, wobble
/// vertically and sample unevenly, and end with a correction: they overshoot and come back, or
/// hold still a moment before letting go. Scripts tend to jump, glide at one speed, draw a ruled
/// line, follow a textbook easing curve to the pixel, tick like a clock, or stop dead on target.
/// None of this stops a script that models all of it: risk and rate limits stand behind the
/// captcha (docs/captcha.md).
public enum HumanDrag {
    static let shortestMs = 300.0
    static let longestMs = 20_000.0
    static let fewestPoints = 8
    /// The last sample must be where the piece was dropped, give or take this (pixels).
    static let endSlack = 4.0
    /// Faster than this (pixels per millisecond) between two samples is a jump, not a drag.
    static let fastestSpeed = 10.0
    /// Below this coefficient of variation of the speed, the drag glides at one speed.
    static let leastSpeedVariation = 0.2

    public static func judge(_ answer: DragAnswer) -> RoboticDrag? {
        let points = answer.trajectory
        guard let first = points.first, let last = points.last else { return .tooFewPoints }
        let span = last.t - first.t
        if span < shortestMs { return .tooFast }
        if span > longestMs { return .tooSlow }
        if points.count < fewestPoints { return .tooFewPoints }
        if abs(last.x - answer.position) > endSlack { return .endMismatch }
        // The press-to-release time covers the samples, and is not much longer than them.
        if answer.durationMs + 50 < span || answer.durationMs > span + 2000 { return .durationMismatch }

        var speeds: [Double] = []
        var previous = first
        for point in points.dropFirst() where point.t > previous.t {
            let distance = ((point.x - previous.x) * (point.x - previous.x) + (point.y - previous.y) * (point.y - previous.y)).squareRoot()
            let speed = distance / (point.t - previous.t)
            if speed > fastestSpeed { return .teleport }
            speeds.append(speed)
            previous = point
        }
        guard speeds.count >= fewestPoints - 1 else { return .tooFewPoints }
        let mean = speeds.reduce(0, +) / Double(speeds.count)
        guard mean > 0 else { return .constantSpeed }
        let variance = speeds.reduce(0) { $0 + ($1 - mean) * ($1 - mean) } / Double(speeds.count)
        let variation = variance.squareRoot() / mean
        if variation < leastSpeedVariation { return .constantSpeed }
        // A hand never holds the exact same height over a whole drag (a pixel is a fraction of one
        // here, since offsets are in background pixels); a script moving along an axis does.
        let ys = points.map(\.y)
        if (ys.max() ?? 0) - (ys.min() ?? 0) == 0 { return .ruledLine }
        if isClockwork(points) { return .regularTiming }
        if followsACurve(points) { return .smoothCurve }
        if !endsWithCorrection(points, releasedAt: first.t + answer.durationMs) { return .noCorrection }
        return nil
    }

    /// Samples a script emits on a timer: every interval the same to a fraction of a millisecond.
    /// Pointer events reach a page with a few milliseconds of jitter at least.
    static let leastIntervalSpread = 0.25

    static func isClockwork(_ points: [DragPoint]) -> Bool {
        let intervals = zip(points.dropFirst(), points).map { $0.t - $1.t }.filter { $0 > 0 }
        guard intervals.count >= 10 else { return false }
        let mean = intervals.reduce(0, +) / Double(intervals.count)
        let spread = (intervals.reduce(0) { $0 + ($1 - mean) * ($1 - mean) } / Double(intervals.count)).squareRoot()
        return spread < leastIntervalSpread
    }

    /// The approach (until the piece first comes within 10% of its drop) lies on one cubic to within
    /// this (pixels, root mean square), in time or in sample order (a script may jitter its clock
    /// but step its curve evenly): an easing function, not an arm.
    static let leastCurveResidual = 0.45
    static let shortestApproach = 40.0

    static func followsACurve(_ points: [DragPoint]) -> Bool {
        guard let target = points.last?.x, target >= shortestApproach else { return false }
        let approach = Array(points.prefix { $0.x < target * 0.9 })
        guard approach.count >= 6, let start = approach.first?.t, let end = approach.last?.t, end > start else { return false }
        let inTime = approach.map { (($0.t - start) / (end - start), $0.x) }
        let inOrder = approach.enumerated().map { (Double($0.offset) / Double(approach.count - 1), $0.element.x) }
        return [inTime, inOrder].contains { samples in
            guard let fitted = CubicFit(samples) else { return false }
            let residual = (samples.reduce(0) { $0 + pow($1.1 - fitted.value(at: $1.0), 2) } / Double(samples.count)).squareRoot()
            return residual < leastCurveResidual
        }
    }

    /// An overshoot of at least this (pixels) past the drop, a step back anywhere, or a still moment
    /// of at least `shortestHold` milliseconds with no sample (a still pointer fires no events): before
    /// the release, or between two samples in the last part of the drag.
    static let leastOvershoot = 1.5
    static let shortestHold = 100.0

    static func endsWithCorrection(_ points: [DragPoint], releasedAt release: Double) -> Bool {
        guard let last = points.last else { return false }
        if (points.map(\.x).max() ?? last.x) >= last.x + leastOvershoot { return true }
        if zip(points.dropFirst(), points).contains(where: { $0.x <= $1.x - 1 }) { return true }
        if release - last.t >= shortestHold { return true }
        let tail = points.drop { $0.x < last.x * 0.6 }
        return zip(tail.dropFirst(), tail).contains { $0.t - $1.t >= shortestHold && abs($0.x - $1.x) < 1 }
    }
}

/// The least-squares cubic through (u, x) samples, u in 0...1: the curve an easing function draws.
struct CubicFit {
    let coefficients: [Double]

    init?(_ samples: [(Double, Double)]) {
        // Normal equations of a 4-term polynomial, solved by Gaussian elimination with pivoting.
        var matrix = [[Double]](repeating: [Double](repeating: 0, count: 5), count: 4)
        for (u, x) in samples {
            let powers = [1, u, u * u, u * u * u]
            for row in 0..<4 {
                for column in 0..<4 { matrix[row][column] += powers[row] * powers[column] }
                matrix[row][4] += powers[row] * x
            }
        }
        for column in 0..<4 {
            guard let pivot = (column..<4).max(by: { abs(matrix[$0][column]) < abs(matrix[$1][column]) }),
                abs(matrix[pivot][column]) > 1e-12
            else { return nil }
            matrix.swapAt(column, pivot)
            for row in 0..<4 where row != column {
                let factor = matrix[row][column] / matrix[column][column]
                for k in column..<5 { matrix[row][k] -= factor * matrix[column][k] }
            }
        }
        coefficients = (0..<4).map { matrix[$0][4] / matrix[$0][$0] }
    }

    func value(at u: Double) -> Double {
        coefficients[0] + u * (coefficients[1] + u * (coefficients[2] + u * coefficients[3]))
    }
}
