/// A jigsaw piece: a square body whose four sides each carry a round tab, a round notch or nothing,
/// as anti-aliased coverage (0...1) over a `size` x `size` box. Every challenge draws its piece's
/// sides at random, and its decoy gaps have other sides, so a person tells the gap by its outline.
struct PuzzleShape: Equatable {
    enum Side: CaseIterable, Equatable {
        case tab, notch, flat
    }

    static let size = 50
    private static let body = (minX: 8.0, minY: 8.0, side: 34.0)
    private static let tabRadius = 7.0
    private static let notchRadius = 6.0

    /// Top, right, bottom, left.
    let sides: [Side]
    /// Coverage per pixel, row-major, from 4x4 samples per pixel.
    let coverage: [Double]

    init(sides: [Side]) {
        precondition(sides.count == 4)
        self.sides = sides
        let samples = 4
        var coverage = [Double](repeating: 0, count: Self.size * Self.size)
        for y in 0..<Self.size {
            for x in 0..<Self.size {
                var inside = 0
                for sy in 0..<samples {
                    for sx in 0..<samples {
                        let px = Double(x) + (Double(sx) + 0.5) / Double(samples)
                        let py = Double(y) + (Double(sy) + 0.5) / Double(samples)
                        if Self.contains(px, py, sides: sides) { inside += 1 }
                    }
                }
                coverage[y * Self.size + x] = Double(inside) / Double(samples * samples)
            }
        }
        self.coverage = coverage
    }

    /// A shape with at least two knobs (tab or notch), so that every outline is recognisable.
    static func random<R: RandomNumberGenerator>(using generator: inout R) -> PuzzleShape {
        PuzzleShape(sides: randomSides(using: &generator))
    }

    /// A shape whose outline differs from `other` on at least two sides: a decoy.
    static func decoy<R: RandomNumberGenerator>(unlike other: PuzzleShape, using generator: inout R) -> PuzzleShape {
        var sides: [Side]
        repeat {
            sides = randomSides(using: &generator)
        } while zip(sides, other.sides).filter({ $0 != $1 }).count < 2
        return PuzzleShape(sides: sides)
    }

    /// Sides are drawn until they qualify, and only those are drawn as coverage: each coverage is
    /// 40,000 samples, and building it for every draw the loops refused cost a challenge more than its
    /// scenery (docs/PERFORMANCE.md).
    private static func randomSides<R: RandomNumberGenerator>(using generator: inout R) -> [Side] {
        var sides: [Side]
        repeat {
            sides = (0..<4).map { _ in Side.allCases.randomElement(using: &generator)! }
        } while sides.filter({ $0 != .flat }).count < 2
        return sides
    }

    private static func contains(_ x: Double, _ y: Double, sides: [Side]) -> Bool {
        func within(_ cx: Double, _ cy: Double, _ r: Double) -> Bool { (x - cx) * (x - cx) + (y - cy) * (y - cy) <= r * r }
        let b = body
        let (midX, midY) = (b.minX + b.side / 2, b.minY + b.side / 2)
        // The middle of each side, in order: top, right, bottom, left.
        let centres = [(midX, b.minY), (b.minX + b.side, midY), (midX, b.minY + b.side), (b.minX, midY)]
        for (side, centre) in zip(sides, centres) where side == .notch && within(centre.0, centre.1, notchRadius) {
            return false
        }
        if x >= b.minX && x < b.minX + b.side && y >= b.minY && y < b.minY + b.side { return true }
        return zip(sides, centres).contains { side, centre in side == .tab && within(centre.0, centre.1, tabRadius) }
    }

    func coverage(_ x: Int, _ y: Int) -> Double {
        guard x >= 0, y >= 0, x < Self.size, y < Self.size else { return 0 }
        return coverage[y * Self.size + x]
    }

    /// How much of the pixel lies on the shape's inner rim: what the outline is drawn with.
    func rim(_ x: Int, _ y: Int) -> Double {
        let inner = [coverage(x - 1, y), coverage(x + 1, y), coverage(x, y - 1), coverage(x, y + 1)].min() ?? 0
        return max(0, coverage(x, y) - inner)
    }
}
