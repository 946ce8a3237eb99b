import Foundation

/// Where the gap is: the left and top edges of the piece's box in background pixels. Only the
/// server knows it; the images carry it only as pixels.
public struct PuzzleAnswer: Sendable, Equatable {
    public let x: Int
    public let y: Int

    public init(x: Int, y: Int) {
        self.x = x
        self.y = y
    }
}

/// One slider puzzle: a generated background with a gap and the piece that fills it, as PNG.
///
/// Nothing in the images ties the piece's pixels to the gap's: the gap is a hole filled with its own
/// noisy frosted tint (the scene barely shows through), the piece carries the scene under its own lighting
/// and noise, and two decoy holes with other outlines sit on the same row. A script that matches the
/// piece's pixels against the background finds no better match at the gap than at a decoy or the
/// open scene (tests/interop/captcha_solver.py measures it); a person matches the outline.
public struct SliderPuzzle: Sendable {
    public static let width = 320
    public static let height = 160
    public static let pieceSize = PuzzleShape.size
    /// How far (background pixels) a drop may land from the gap and still count.
    public static let tolerance = 5.0
    /// The gap's left edge is drawn from this range, so that every answer needs a real drag.
    static let gapX = 80...(width - pieceSize - 10)
    static let gapY = 8...(height - pieceSize - 8)
    /// Decoys keep this far (pixels) from every other hole, so that no two outlines touch.
    static let holeSpacing = pieceSize + 6

    public let answer: PuzzleAnswer
    /// Where the decoy holes are (left and top edges): for tests; never sent.
    public let decoys: [PuzzleAnswer]
    /// `width` x `height` RGB PNG with the gap and the decoys cut out and outlined.
    public let background: [UInt8]
    /// `pieceSize` x `height` RGBA PNG, transparent except the piece at the gap's height, so that the
    /// page slides it horizontally only.
    public let piece: [UInt8]

    /// A puzzle from the system's CSPRNG. Not generic, so that the painting below is compiled for
    /// this one generator: called across modules, the generic version ran unspecialized, every random
    /// number through witness tables and metadata lookups.
    public static func generate() -> SliderPuzzle {
        var generator = SystemRandomBuffer()
        return generate(using: &generator)
    }

    static func generate<R: RandomNumberGenerator>(using generator: inout R) -> SliderPuzzle {
        let scene = Scenery.paint(width: width, height: height, using: &generator)
        let answer = PuzzleAnswer(x: Int.random(in: gapX, using: &generator), y: Int.random(in: gapY, using: &generator))
        let shape = PuzzleShape.random(using: &generator)
        var holes = [(answer, shape)]
        for _ in 0..<2 {
            // Decoys on the piece's row (give or take a few pixels), anywhere they fit.
            let free = (0...(width - pieceSize)).filter { x in holes.allSatisfy { abs($0.0.x - x) >= holeSpacing } }
            guard let x = free.randomElement(using: &generator) else { break }
            let y = min(gapY.upperBound, max(gapY.lowerBound, answer.y + Int.random(in: -4...4, using: &generator)))
            holes.append((PuzzleAnswer(x: x, y: y), PuzzleShape.decoy(unlike: shape, using: &generator)))
        }

        var background = scene
        // Frosted, not dark: a dark hole would be where "the piece darkened" matches best.
        let fill = Pixel.hsl(Double.random(in: 0..<360, using: &generator), 0.1, Double.random(in: 0.55...0.8, using: &generator))
        let fillOpacity = Double.random(in: 0.9...0.96, using: &generator)
        for (hole, holeShape) in holes {
            for dy in 0..<pieceSize {
                for dx in 0..<pieceSize {
                    let coverage = holeShape.coverage(dx, dy)
                    guard coverage > 0 else { continue }
                    let (x, y) = (hole.x + dx, hole.y + dy)
                    let hollow = scene[x, y].blended(with: fill, opacity: fillOpacity).noisy(18, using: &generator)
                    background[x, y] = scene[x, y].blended(with: hollow, opacity: coverage)
                        .blended(with: .white, opacity: holeShape.rim(dx, dy) * 0.6)
                }
            }
        }

        // The piece under its own light: brighter or darker, warmer or cooler, and noisy.
        let light = Double.random(in: 0.8...1.2, using: &generator)
        let tint = Pixel.hsl(Double.random(in: 0..<360, using: &generator), 0.6, 0.5)
        let tintOpacity = Double.random(in: 0.05...0.2, using: &generator)
        var piece = RasterImage(width: pieceSize, height: height, fill: .clear, hasAlpha: true)
        for dy in 0..<pieceSize {
            for dx in 0..<pieceSize {
                let coverage = shape.coverage(dx, dy)
                guard coverage > 0 else { continue }
                // No rim of its own (the page draws the piece's shadow): a rim the gap's rim could
                // echo would be a pattern to match.
                var cut = scene[answer.x + dx, answer.y + dy].scaled(light).blended(with: tint, opacity: tintOpacity).noisy(12, using: &generator)
                cut.a = UInt8((coverage * 255).rounded())
                piece[dx, answer.y + dy] = cut
            }
        }
        return SliderPuzzle(answer: answer, decoys: holes.dropFirst().map(\.0), background: background.png, piece: piece.png)
    }

    /// Whether a drop at `position` (the piece's left edge, background pixels) fills the gap.
    public static func fits(_ position: Double, answer: PuzzleAnswer) -> Bool {
        abs(position - Double(answer.x)) <= tolerance
    }
}

/// The random landscape the puzzle is cut from: a sky gradient, rolling hills, translucent discs
/// and a few streaks, all from the generator, so that no two challenges share a background.
enum Scenery {
    static func paint<R: RandomNumberGenerator>(width: Int, height: Int, using generator: inout R) -> RasterImage {
        let hue = Double.random(in: 0..<360, using: &generator)
        let top = Pixel.hsl(hue, 0.55, 0.78)
        let bottom = Pixel.hsl(hue + Double.random(in: 30...90, using: &generator), 0.5, 0.55)
        var image = RasterImage(width: width, height: height, fill: top)
        let slant = Double.random(in: -0.6...0.6, using: &generator)
        for y in 0..<height {
            for x in 0..<width {
                let t = (Double(y) + slant * Double(x - width / 2)) / Double(height)
                image[x, y] = top.blended(with: bottom, opacity: t)
            }
        }
        for _ in 0..<Int.random(in: 4...7, using: &generator) {
            let cx = Double.random(in: 0..<Double(width), using: &generator)
            let cy = Double.random(in: 0..<Double(height), using: &generator)
            let radius = Double.random(in: 12...46, using: &generator)
            let color = Pixel.hsl(Double.random(in: 0..<360, using: &generator), 0.6, Double.random(in: 0.4...0.8, using: &generator))
            let opacity = Double.random(in: 0.35...0.8, using: &generator)
            disc(&image, cx, cy, radius, color, opacity)
        }
        for layer in 0..<3 {
            let base = Double(height) * (0.45 + 0.17 * Double(layer)) + Double.random(in: -10...10, using: &generator)
            let amplitude = Double.random(in: 6...22, using: &generator)
            let frequency = Double.random(in: 0.012...0.045, using: &generator)
            let phase = Double.random(in: 0..<(2 * .pi), using: &generator)
            let color = Pixel.hsl(hue + 120 + Double(layer) * 25, 0.45, 0.5 - Double(layer) * 0.1)
            for x in 0..<width {
                let ridge = base + amplitude * sin(Double(x) * frequency + phase) + amplitude * 0.4 * sin(Double(x) * frequency * 2.7 + phase * 1.3)
                // A crest may dip below the bottom edge: then that column has no hill.
                let start = min(height, max(0, Int(ridge.rounded(.down))))
                for y in start..<height {
                    // Anti-alias the ridge line; everything below it is solid.
                    image[x, y] = image[x, y].blended(with: color, opacity: min(1, Double(y) + 1 - ridge))
                }
            }
        }
        for _ in 0..<Int.random(in: 1...3, using: &generator) {
            let y0 = Double.random(in: 0..<Double(height), using: &generator)
            let gradient = Double.random(in: -0.5...0.5, using: &generator)
            let color = Pixel.hsl(Double.random(in: 0..<360, using: &generator), 0.3, 0.9)
            for x in 0..<width {
                let y = y0 + gradient * Double(x)
                let row = Int(y.rounded(.down))
                for (dy, weight) in [(0, 1 - (y - Double(row))), (1, y - Double(row))] where image.contains(x, row + dy) {
                    image[x, row + dy] = image[x, row + dy].blended(with: color, opacity: 0.5 * weight)
                }
            }
        }
        return image
    }

    private static func disc(_ image: inout RasterImage, _ cx: Double, _ cy: Double, _ radius: Double, _ color: Pixel, _ opacity: Double) {
        let minX = max(0, Int(cx - radius - 1))
        let maxX = min(image.width - 1, Int(cx + radius + 1))
        let minY = max(0, Int(cy - radius - 1))
        let maxY = min(image.height - 1, Int(cy + radius + 1))
        guard minX <= maxX, minY <= maxY else { return }
        for y in minY...maxY {
            for x in minX...maxX {
                let distance = ((Double(x) + 0.5 - cx) * (Double(x) + 0.5 - cx) + (Double(y) + 0.5 - cy) * (Double(y) + 0.5 - cy)).squareRoot()
                let edge = max(0, min(1, radius - distance + 0.5))
                if edge > 0 { image[x, y] = image[x, y].blended(with: color, opacity: opacity * edge) }
            }
        }
    }
}
