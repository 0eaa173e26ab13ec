// The code of docs/client.md: each block between `// doc:begin NAME` and `// doc:end` is shown
// there verbatim (ClientDocTests checks it), and ClientDocTests runs the model against a real
// thumbd. The UIKit and SwiftUI glue compiles where those frameworks exist (not on Linux).
import Foundation
import ThumbdClient

// doc:begin model
/// A photo grid's model: what a UIKit or SwiftUI grid calls, mapped to ThumbdClient.
@MainActor final class PhotoGridModel {
    let library: ThumbdLibrary
    let images: ThumbdImageManager
    let caching: ThumbdCachingManager
    private(set) var assets = ThumbdFetchResult(assets: [], sort: .newest, generation: 0)
    private(set) var columns = 3
    private(set) var preheat: ThumbdPreheatController

    init(server: URL, clientKey: String? = nil) {
        library = ThumbdLibrary(baseURL: server, clientKey: clientKey)
        images = ThumbdImageManager(library: library)
        caching = ThumbdCachingManager(library: library)
        preheat = ThumbdPreheatController(caching: caching, grid: .three, columns: 3, itemCount: 0)
    }

    var grid: ThumbdGrid { ThumbdGrid(columns: columns) }

    /// viewDidLoad / .task: the listing, then the preheat for its size.
    func load() async throws {
        assets = try await library.fetchAssets(sort: .newest)
        await preheat.reset(grid: grid, columns: columns, itemCount: assets.count, sort: .newest)
    }

    /// cellForItemAt / onAppear: the placeholder at once, then the thumbnail. Cancel the task
    /// that iterates (prepareForReuse / onDisappear) and the download stops.
    func thumbnails(at index: Int) -> AsyncThrowingStream<ThumbdImageResult, any Error> {
        images.requestImage(for: assets[index], grid: grid)
    }

    /// scrollViewDidScroll: offsets and sizes in points, as UIKit gives them.
    func scrolled(contentOffsetY: Double, viewportHeight: Double, rowHeight: Double) async {
        await preheat.update(top: contentOffsetY / rowHeight, height: viewportHeight / rowHeight)
    }

    /// UICollectionViewDataSourcePrefetching: warm these cells' thumbnails, or let them go.
    func prefetch(_ indexes: [Int]) async throws {
        try await caching.startCaching(assets: indexes.map { assets[$0] }, grid: grid)
    }

    func cancelPrefetching(_ indexes: [Int]) async throws {
        try await caching.stopCaching(assets: indexes.map { assets[$0] }, grid: grid)
    }

    /// A pinch to 1, 3 or 5 columns: every job stops (DELETE /prefetch), the new grid preheats.
    func setColumns(_ columns: Int) async {
        self.columns = columns
        await preheat.reset(grid: grid, columns: columns, itemCount: assets.count, sort: .newest)
    }

    /// PHPhotoLibraryChangeObserver: the listing's changes, for a batch update.
    func observeChanges(_ apply: @MainActor (ThumbdChangeDetails) -> Void) async throws {
        for try await details in library.changes(since: assets) {
            assets = details.fetchResultAfterChanges
            await preheat.reset(grid: grid, columns: columns, itemCount: assets.count, sort: .newest)
            apply(details)
        }
    }
}
// doc:end

#if canImport(UIKit)
import UIKit

// doc:begin uikit
final class PhotoGridController: UICollectionViewController, UICollectionViewDataSourcePrefetching {
    let model = PhotoGridModel(server: URL(string: "https://photos.example.com/")!)
    private var loads: [IndexPath: Task<Void, Never>] = [:]

    override func viewDidLoad() {
        super.viewDidLoad()
        collectionView.prefetchDataSource = self
        collectionView.register(UICollectionViewCell.self, forCellWithReuseIdentifier: "cell")
        Task {
            try? await model.load()
            collectionView.reloadData()
        }
    }

    override func collectionView(_ view: UICollectionView, numberOfItemsInSection section: Int) -> Int {
        model.assets.count
    }

    override func collectionView(_ view: UICollectionView, cellForItemAt path: IndexPath) -> UICollectionViewCell {
        let cell = view.dequeueReusableCell(withReuseIdentifier: "cell", for: path)
        let imageView = UIImageView(frame: cell.contentView.bounds)
        cell.backgroundView = imageView
        loads[path]?.cancel()
        loads[path] = Task {
            do {
                for try await result in model.thumbnails(at: path.item) {
                    switch result {
                    case .placeholder(let blur): imageView.image = UIImage(rgba: blur.rgba, width: blur.width, height: blur.height)
                    case .thumbnail(let thumbnail): imageView.image = UIImage(data: thumbnail.data)
                    }
                }
            } catch {
                // ThumbdError: keep the placeholder (a 404 asset gone, a 503 to retry later)
            }
        }
        return cell
    }

    override func collectionView(_ view: UICollectionView, didEndDisplaying cell: UICollectionViewCell, forItemAt path: IndexPath) {
        loads.removeValue(forKey: path)?.cancel()   // the server sees the client leave
    }

    override func scrollViewDidScroll(_ scrollView: UIScrollView) {
        let rowHeight = scrollView.bounds.width / Double(model.columns)
        Task { await model.scrolled(contentOffsetY: scrollView.contentOffset.y, viewportHeight: scrollView.bounds.height, rowHeight: rowHeight) }
    }

    func collectionView(_ view: UICollectionView, prefetchItemsAt paths: [IndexPath]) {
        Task { try? await model.prefetch(paths.map(\.item)) }
    }

    func collectionView(_ view: UICollectionView, cancelPrefetchingForItemsAt paths: [IndexPath]) {
        Task { try? await model.cancelPrefetching(paths.map(\.item)) }
    }
}
// doc:end

extension UIImage {
    /// The placeholder's RGBA as an image (CoreGraphics).
    convenience init?(rgba: [UInt8], width: Int, height: Int) {
        guard let provider = CGDataProvider(data: Data(rgba) as CFData),
              let image = CGImage(width: width, height: height, bitsPerComponent: 8, bitsPerPixel: 32, bytesPerRow: width * 4,
                                  space: CGColorSpaceCreateDeviceRGB(), bitmapInfo: CGBitmapInfo(rawValue: CGImageAlphaInfo.last.rawValue),
                                  provider: provider, decode: nil, shouldInterpolate: true, intent: .defaultIntent) else { return nil }
        self.init(cgImage: image)
    }
}
#endif

#if canImport(SwiftUI) && canImport(UIKit)
import SwiftUI

// doc:begin swiftui
struct PhotoCell: View {
    let model: PhotoGridModel
    let index: Int
    @State private var image: UIImage?

    var body: some View {
        Color.gray.overlay { image.map { Image(uiImage: $0).resizable().scaledToFill() } }
            .task(id: index) {   // onAppear starts it, onDisappear cancels it (and its download)
                do {
                    for try await result in model.thumbnails(at: index) {
                        switch result {
                        case .placeholder(let blur): image = UIImage(rgba: blur.rgba, width: blur.width, height: blur.height)
                        case .thumbnail(let thumbnail): image = UIImage(data: thumbnail.data)
                        }
                    }
                } catch {}
            }
    }
}
// doc:end
#endif
