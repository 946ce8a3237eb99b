/// One pixel, 8 bits per channel, straight (not premultiplied) alpha.
struct Pixel: Equatable {
    var r: UInt8
    var g: UInt8
    var b: UInt8
    var a: UInt8 = 255

    /// `self` painted over with `top` at `opacity` (0...1).
    func blended(with top: Pixel, opacity: Double) -> Pixel {
        let o = max(0, min(1, opacity))
        // Half up by truncation, which for these non-negative sums is what `rounded()` gives, without
        // its call into libm for every channel of every pixel blended (a twelfth of a challenge's CPU).
        func mix(_ under: UInt8, _ over: UInt8) -> UInt8 { UInt8(Double(under) * (1 - o) + Double(over) * o + 0.5) }
        return Pixel(r: mix(r, top.r), g: mix(g, top.g), b: mix(b, top.b), a: a)
    }

    /// Each colour channel times `factor` (a shadow below 1, a highlight above).
    func scaled(_ factor: Double) -> Pixel {
        func scale(_ v: UInt8) -> UInt8 { UInt8(max(0, min(255, (Double(v) * factor).rounded()))) }
        return Pixel(r: scale(r), g: scale(g), b: scale(b), a: a)
    }

    /// Each colour channel moved by its own random amount within ±`amplitude`: grain that no two
    /// images share, so that no pixel of one equals a pixel of another.
    func noisy<R: RandomNumberGenerator>(_ amplitude: Int, using generator: inout R) -> Pixel {
        func move(_ v: UInt8) -> UInt8 { UInt8(max(0, min(255, Int(v) + Int.random(in: -amplitude...amplitude, using: &generator)))) }
        return Pixel(r: move(r), g: move(g), b: move(b), a: a)
    }

    static let clear = Pixel(r: 0, g: 0, b: 0, a: 0)
    static let white = Pixel(r: 255, g: 255, b: 255)

    /// A colour from hue (0..<360), saturation and lightness (0...1).
    static func hsl(_ hue: Double, _ saturation: Double, _ lightness: Double) -> Pixel {
        let c = (1 - abs(2 * lightness - 1)) * saturation
        let h = (hue.truncatingRemainder(dividingBy: 360) + 360).truncatingRemainder(dividingBy: 360) / 60
        let x = c * (1 - abs(h.truncatingRemainder(dividingBy: 2) - 1))
        let (r, g, b): (Double, Double, Double) =
            switch Int(h) {
            case 0: (c, x, 0)
            case 1: (x, c, 0)
            case 2: (0, c, x)
            case 3: (0, x, c)
            case 4: (x, 0, c)
            default: (c, 0, x)
            }
        let m = lightness - c / 2
        func byte(_ v: Double) -> UInt8 { UInt8(max(0, min(255, ((v + m) * 255).rounded()))) }
        return Pixel(r: byte(r), g: byte(g), b: byte(b))
    }
}

/// A width x height pixel buffer, row-major.
struct RasterImage {
    let width: Int
    let height: Int
    let hasAlpha: Bool
    private(set) var pixels: [Pixel]

    init(width: Int, height: Int, fill: Pixel, hasAlpha: Bool = false) {
        self.width = width
        self.height = height
        self.hasAlpha = hasAlpha
        pixels = Array(repeating: fill, count: width * height)
    }

    subscript(x: Int, y: Int) -> Pixel {
        get { pixels[y * width + x] }
        set { pixels[y * width + x] = newValue }
    }

    func contains(_ x: Int, _ y: Int) -> Bool { x >= 0 && y >= 0 && x < width && y < height }

    var png: [UInt8] { PNG.encode(self) }
}
