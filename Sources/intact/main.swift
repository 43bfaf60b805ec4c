import IntactCLI
import Foundation

print("intact \(IntactVersion.string)")
