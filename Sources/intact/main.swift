import Glibc
import IntactCLI

exit(IntactCommandLine.run(Array(CommandLine.arguments.dropFirst())))
