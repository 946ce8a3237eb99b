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
}

/// Decides whether a drag looks human. People press, accelerate, slow down near the gap, wobble
/// vertically and sample unevenly; scripts tend to jump, glide at one speed or draw a ruled line.
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
        return nil
    }
}
