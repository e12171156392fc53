// quakes: the Earthquakes example's executable: the command line of QuakesCommand, as it is.
//
// Owns: nothing but the entry point. Never shares the store (quakes-sync in the Sync package does).

import QuakesExample

await QuakesCommand.main(arguments: Array(CommandLine.arguments.dropFirst()))
