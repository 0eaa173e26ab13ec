// thumbd: an image thumbnail cache server. See README.md.
import Foundation
import ThumbServer

Launcher.run()
dispatchMain()
