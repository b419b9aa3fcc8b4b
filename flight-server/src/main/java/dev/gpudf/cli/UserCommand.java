package dev.gpudf.cli;

import dev.gpudf.columnar.error.UserException;
import dev.gpudf.flight.Users;
import java.io.BufferedReader;
import java.io.InputStreamReader;
import java.nio.charset.StandardCharsets;
import java.util.concurrent.Callable;
import picocli.CommandLine.Command;
import picocli.CommandLine.Parameters;
import picocli.CommandLine.Spec;
import picocli.CommandLine.Model.CommandSpec;

/** {@code gpudf user NAME}: reads a password from standard input and prints the users-file line for {@code serve --users}. */
@Command(name = "user", description = "Print a users-file line (salted PBKDF2 hash) for a password read from standard input")
final class UserCommand implements Callable<Integer> {
  @Spec
  CommandSpec spec;

  @Parameters(index = "0", description = "The user name")
  String name;

  @picocli.CommandLine.Option(names = "--role", defaultValue = "WRITE", description = "read (queries only) or write "
      + "(may also create, change and drop tables; default)", converter = RoleConverter.class)
  Users.Role role;

  /** {@code read} or {@code write}, in any case. */
  static final class RoleConverter implements picocli.CommandLine.ITypeConverter<Users.Role> {
    @Override
    public Users.Role convert(String value) {
      try {
        return Users.Role.valueOf(value.toUpperCase(java.util.Locale.ROOT));
      } catch (IllegalArgumentException e) {
        throw new picocli.CommandLine.TypeConversionException("a role is read or write, not " + value);
      }
    }
  }

  @Override
  public Integer call() throws Exception {
    char[] password = System.console() != null ? System.console().readPassword("password for %s: ", name)
        : readLine();
    if (password == null || password.length == 0) {
      throw new UserException("no password given on standard input");
    }
    spec.commandLine().getOut().println(Users.line(name, password, role));
    spec.commandLine().getOut().flush();
    return 0;
  }

  private static char[] readLine() throws java.io.IOException {
    String line = new BufferedReader(new InputStreamReader(System.in, StandardCharsets.UTF_8)).readLine();
    return line == null ? null : line.toCharArray();
  }
}
