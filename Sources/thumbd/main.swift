// thumbd: an image thumbnail cache server. See README.md.
import Foundation
import Rendering
import ThumbServer

// The video helper process (README "Videos") is this binary run with a hidden argument.
VideoHelper.serveIfAsked(CommandLine.arguments)
Launcher.run()
dispatchMain()
