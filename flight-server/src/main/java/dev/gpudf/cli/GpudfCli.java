package dev.gpudf.cli;

import picocli.CommandLine;
import picocli.CommandLine.Command;

/** The {@code gpudf} command line: {@code info} and {@code sql} now; {@code serve}, {@code load}, {@code bench} later. */
@Command(name = "gpudf", mixinStandardHelpOptions = true, version = "gpudf 0.1.0-SNAPSHOT",
    description = "GPU dataframe and SQL engine for the JVM on Apache Arrow",
    subcommands = {InfoCommand.class, SqlCommand.class})
public final class GpudfCli {
  public static void main(String[] args) {
    System.exit(new CommandLine(new GpudfCli()).execute(args));
  }
}
