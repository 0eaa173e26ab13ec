/// One page of `GET /assets` (docs/API.md, "Listing"): the listing's shape, as clients and the
/// tests read it. The server writes it by hand (`ThumbService.respondWithListing`): a page holds
/// up to 10,000 items, and `JSONEncoder` took several times as long to write one (the figures
/// are in that function's comment). `JSONBody.encode` of a page gives the same values.
/// Decoding refuses a page without one of its fields (`next`, `duration_ms` and `thumbhash`
/// are `null`, never absent).
struct ListingBody: Codable, Sendable, Equatable {
    /// `total`: the items of the listing (the caller's folder alone, with a client key's `prefix`).
    var total: Int
    /// `offset`: how many items of the listing come before the page's first.
    var offset: Int
    /// `generation`: changes whenever the listing does (compare for equality only).
    var generation: Int
    /// `next`: the cursor of the page's last item for `after=`; `null` when none follows.
    var next: String?
    /// `items`: the page's items, in its `sort`.
    var items: [Item]

    private enum CodingKeys: String, CodingKey {
        case total, offset, generation, next, items
    }

    init(total: Int, offset: Int, generation: Int, next: String?, items: [Item]) {
        self.total = total
        self.offset = offset
        self.generation = generation
        self.next = next
        self.items = items
    }

    init(from decoder: any Decoder) throws {
        let fields = try decoder.container(keyedBy: CodingKeys.self)
        total = try fields.decode(Int.self, forKey: .total)
        offset = try fields.decode(Int.self, forKey: .offset)
        generation = try fields.decode(Int.self, forKey: .generation)
        next = try fields.decode(String?.self, forKey: .next)
        items = try fields.decode([Item].self, forKey: .items)
    }

    func encode(to encoder: any Encoder) throws {
        var fields = encoder.container(keyedBy: CodingKeys.self)
        try fields.encode(total, forKey: .total)
        try fields.encode(offset, forKey: .offset)
        try fields.encode(generation, forKey: .generation)
        try fields.encode(next, forKey: .next)   // null, never absent
        try fields.encode(items, forKey: .items)
    }

    /// One listed file.
    struct Item: Codable, Sendable, Equatable {
        /// A photo or a video (MP4, MOV, M4V, WebM, AVI).
        enum Kind: String, Codable, Sendable {
            case photo, video
        }

        /// `path`: the asset path as text (U+FFFD for each byte of a name that is not UTF-8:
        /// for display only).
        var path: String
        /// `url`: the asset path with every byte but `A-Z a-z 0-9 - . _ ~ /` percent-encoded.
        var url: String
        /// `bytes`: the file's size.
        var bytes: Int
        /// `type`: `photo` or `video`.
        var type: Kind
        /// `duration_ms`: a video's duration, ms (0 when its container does not say); `null`
        /// for a photo.
        var durationMilliseconds: Int?
        /// `width`, `height`: as displayed (after EXIF orientation, or a video's rotation), px.
        var width: Int
        var height: Int
        /// `taken`: the capture time, else the modification time, ISO 8601 with an offset.
        var taken: String
        /// `modified`: the file's modification time, ISO 8601 with an offset.
        var modified: String
        /// `thumbhash`: base64 of the item's ThumbHash placeholder; `null` until one is known.
        var thumbhash: String?
        /// `thumbnails`: each grid's name → the item's versioned thumbnail URL,
        /// `/thumbnails/{grid}/{url}?v={version}` (signed, with `signing_keys`).
        var thumbnails: [String: String]

        private enum CodingKeys: String, CodingKey {
            case path, url, bytes, type, durationMilliseconds = "duration_ms", width, height, taken, modified
            case thumbhash, thumbnails
        }

        init(path: String, url: String, bytes: Int, type: Kind, durationMilliseconds: Int?, width: Int, height: Int,
             taken: String, modified: String, thumbhash: String?, thumbnails: [String: String]) {
            self.path = path
            self.url = url
            self.bytes = bytes
            self.type = type
            self.durationMilliseconds = durationMilliseconds
            self.width = width
            self.height = height
            self.taken = taken
            self.modified = modified
            self.thumbhash = thumbhash
            self.thumbnails = thumbnails
        }

        init(from decoder: any Decoder) throws {
            let fields = try decoder.container(keyedBy: CodingKeys.self)
            path = try fields.decode(String.self, forKey: .path)
            url = try fields.decode(String.self, forKey: .url)
            bytes = try fields.decode(Int.self, forKey: .bytes)
            type = try fields.decode(Kind.self, forKey: .type)
            durationMilliseconds = try fields.decode(Int?.self, forKey: .durationMilliseconds)
            width = try fields.decode(Int.self, forKey: .width)
            height = try fields.decode(Int.self, forKey: .height)
            taken = try fields.decode(String.self, forKey: .taken)
            modified = try fields.decode(String.self, forKey: .modified)
            thumbhash = try fields.decode(String?.self, forKey: .thumbhash)
            thumbnails = try fields.decode([String: String].self, forKey: .thumbnails)
        }

        func encode(to encoder: any Encoder) throws {
            var fields = encoder.container(keyedBy: CodingKeys.self)
            try fields.encode(path, forKey: .path)
            try fields.encode(url, forKey: .url)
            try fields.encode(bytes, forKey: .bytes)
            try fields.encode(type, forKey: .type)
            try fields.encode(durationMilliseconds, forKey: .durationMilliseconds)   // null for a photo
            try fields.encode(width, forKey: .width)
            try fields.encode(height, forKey: .height)
            try fields.encode(taken, forKey: .taken)
            try fields.encode(modified, forKey: .modified)
            try fields.encode(thumbhash, forKey: .thumbhash)   // null until known
            try fields.encode(thumbnails, forKey: .thumbnails)
        }
    }
}
