package dev.gpudf.flight;

import dev.gpudf.columnar.error.UserException;
import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.security.GeneralSecurityException;
import java.security.MessageDigest;
import java.security.SecureRandom;
import java.util.Base64;
import java.util.HashMap;
import java.util.Map;
import javax.crypto.SecretKeyFactory;
import javax.crypto.spec.PBEKeySpec;
import org.apache.arrow.flight.CallStatus;
import org.apache.arrow.flight.auth2.BasicCallHeaderAuthenticator;
import org.apache.arrow.flight.auth2.CallHeaderAuthenticator;

/**
 * The server's users, read from a file of lines {@code name:iterations:salt:hash} (salt and hash
 * in Base64; hash = PBKDF2-HMAC-SHA256 of the password, 256 bits; {@code #} starts a comment),
 * which {@link #line} writes. Checks basic-auth credentials for Flight's bearer-token handshake;
 * a wrong name or password is UNAUTHENTICATED, in constant time once the user is found.
 */
public final class Users implements BasicCallHeaderAuthenticator.CredentialValidator {
  private static final int ITERATIONS = 210_000;
  private final Map<String, String[]> users = new HashMap<>();

  private Users() {}

  /** The users of {@code file}; a malformed line is a user error naming its line number. */
  public static Users read(Path file) {
    Users u = new Users();
    try {
      int n = 0;
      for (String line : Files.readAllLines(file, StandardCharsets.UTF_8)) {
        n++;
        String t = line.strip();
        if (t.isEmpty() || t.startsWith("#")) {
          continue;
        }
        String[] parts = t.split(":");
        if (parts.length != 4 || !parts[1].matches("[0-9]+")) {
          throw new UserException(file + " line " + n + ": expected name:iterations:salt:hash");
        }
        u.users.put(parts[0], parts);
      }
    } catch (IOException e) {
      throw new UserException("cannot read the users file " + file + ": " + e.getMessage(), e);
    }
    if (u.users.isEmpty()) {
      throw new UserException(file + " names no users");
    }
    return u;
  }

  /** A users-file line for {@code name} with a fresh salt. */
  public static String line(String name, char[] password) {
    if (name.isEmpty() || name.contains(":")) {
      throw new UserException("a user name must be non-empty and without ':'");
    }
    byte[] salt = new byte[16];
    new SecureRandom().nextBytes(salt);
    Base64.Encoder b64 = Base64.getEncoder();
    return name + ":" + ITERATIONS + ":" + b64.encodeToString(salt) + ":" + b64.encodeToString(hash(password, salt, ITERATIONS));
  }

  private static byte[] hash(char[] password, byte[] salt, int iterations) {
    try {
      return SecretKeyFactory.getInstance("PBKDF2WithHmacSHA256")
          .generateSecret(new PBEKeySpec(password, salt, iterations, 256)).getEncoded();
    } catch (GeneralSecurityException e) {
      throw new IllegalStateException("PBKDF2WithHmacSHA256 is missing from this JDK", e);
    }
  }

  @Override
  public CallHeaderAuthenticator.AuthResult validate(String username, String password) {
    String[] entry = users.get(username);
    if (entry != null) {
      Base64.Decoder b64 = Base64.getDecoder();
      byte[] want = b64.decode(entry[3]);
      byte[] got = hash(password.toCharArray(), b64.decode(entry[2]), Integer.parseInt(entry[1]));
      if (MessageDigest.isEqual(want, got)) {
        return () -> username;
      }
    }
    throw CallStatus.UNAUTHENTICATED.withDescription("wrong user name or password").toRuntimeException();
  }
}
