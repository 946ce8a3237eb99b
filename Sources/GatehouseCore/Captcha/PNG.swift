/// PNG encoding (8-bit RGB or RGBA, one IDAT, the Sub filter on every row).
enum PNG {
    static func encode(_ image: RasterImage) -> [UInt8] {
        let channels = image.hasAlpha ? 4 : 3
        var scanlines: [UInt8] = []
        scanlines.reserveCapacity(image.height * (1 + image.width * channels))
        for y in 0..<image.height {
            scanlines.append(1)  // filter type Sub: each byte minus the same channel of the pixel to its left
            var left: (UInt8, UInt8, UInt8, UInt8) = (0, 0, 0, 0)
            for x in 0..<image.width {
                let p = image[x, y]
                scanlines.append(p.r &- left.0)
                scanlines.append(p.g &- left.1)
                scanlines.append(p.b &- left.2)
                if channels == 4 { scanlines.append(p.a &- left.3) }
                left = (p.r, p.g, p.b, p.a)
            }
        }
        var header: [UInt8] = []
        header += bigEndian(UInt32(image.width))
        header += bigEndian(UInt32(image.height))
        header += [8, image.hasAlpha ? 6 : 2, 0, 0, 0]
        var png: [UInt8] = [0x89, 0x50, 0x4E, 0x47, 0x0D, 0x0A, 0x1A, 0x0A]
        png += chunk("IHDR", header)
        png += chunk("IDAT", Deflate.zlib(scanlines))
        png += chunk("IEND", [])
        return png
    }

    private static func chunk(_ type: String, _ data: [UInt8]) -> [UInt8] {
        let typed = Array(type.utf8) + data
        return bigEndian(UInt32(data.count)) + typed + bigEndian(crc32(typed))
    }

    private static func bigEndian(_ value: UInt32) -> [UInt8] {
        [UInt8(value >> 24), UInt8(value >> 16 & 0xFF), UInt8(value >> 8 & 0xFF), UInt8(value & 0xFF)]
    }

    private static let crcTable: [UInt32] = (0..<256).map { n in
        var c = UInt32(n)
        for _ in 0..<8 { c = c & 1 != 0 ? 0xEDB8_8320 ^ (c >> 1) : c >> 1 }
        return c
    }

    static func crc32(_ data: [UInt8]) -> UInt32 {
        var crc: UInt32 = 0xFFFF_FFFF
        for byte in data { crc = crcTable[Int((crc ^ UInt32(byte)) & 0xFF)] ^ (crc >> 8) }
        return crc ^ 0xFFFF_FFFF
    }
}
