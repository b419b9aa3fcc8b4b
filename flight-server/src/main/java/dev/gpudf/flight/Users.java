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
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * The server's users, read from a file of lines {@code name:iterations:salt:hash[:role]} (salt
 * and hash in Base64; hash = PBKDF2-HMAC-SHA256 of the password, 256 bits; role {@code read} or
 * {@code write}, and {@code write} when left out, as in files written before roles; {@code #}
 * starts a comment), which {@link #line} writes. Checks basic-auth credentials for Flight's
 * bearer-token handshake: a wrong name or password is UNAUTHENTICATED and takes as long for an
 * unknown name as for a known one (a name's existence does not show in the time); each failure
 * is logged, and after {@value #MAX_FAILURES} failures for one name within a minute that name is
 * refused, without checking the password, until the minute since the oldest has passed.
 */
public final class Users implements BasicCallHeaderAuthenticator.CredentialValidator {
  private static final Logger LOG = LoggerFactory.getLogger(Users.class);
  private static final int ITERATIONS = 210_000;
  static final int MAX_FAILURES = 5;
  private static final long FAILURE_WINDOW_NANOS = 60_000_000_000L;
  /** Names whose failures are remembered at once: the oldest is forgotten past this, so a flood of names is bounded. */
  private static final int MAX_TRACKED_NAMES = 10_000;

  /** What a user may do: read tables only, or also change them. */
  public enum Role { READ, WRITE }

  private final Map<String, String[]> users = new HashMap<>();
  // an entry no password matches, hashed for an unknown name so it costs what a known one does
  private final String[] nobody;
  private final Map<String, java.util.ArrayDeque<Long>> failures = new java.util.LinkedHashMap<>(16, 0.75f, true) {
    @Override
    protected boolean removeEldestEntry(Map.Entry<String, java.util.ArrayDeque<Long>> eldest) {
      return size() > MAX_TRACKED_NAMES;
    }
  };

  private Users() {
    byte[] salt = new byte[16];
    new SecureRandom().nextBytes(salt);
    Base64.Encoder b64 = Base64.getEncoder();
    nobody = new String[] {"", String.valueOf(ITERATIONS), b64.encodeToString(salt), b64.encodeToString(new byte[32]), "read"};
  }

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
        if (parts.length < 4 || parts.length > 5 || !parts[1].matches("[0-9]{1,7}")
            || parts.length == 5 && !parts[4].equals("read") && !parts[4].equals("write")) {
          throw new UserException(file + " line " + n + ": expected name:iterations:salt:hash[:read|write]");
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

  /** A users-file line for {@code name} with a fresh salt, who may change tables. */
  public static String line(String name, char[] password) {
    return line(name, password, Role.WRITE);
  }

  /** A users-file line for {@code name} with a fresh salt and {@code role}. */
  public static String line(String name, char[] password, Role role) {
    if (name.isEmpty() || name.contains(":")) {
      throw new UserException("a user name must be non-empty and without ':'");
    }
    byte[] salt = new byte[16];
    new SecureRandom().nextBytes(salt);
    Base64.Encoder b64 = Base64.getEncoder();
    return name + ":" + ITERATIONS + ":" + b64.encodeToString(salt) + ":" + b64.encodeToString(hash(password, salt, ITERATIONS))
        + ":" + role.name().toLowerCase(java.util.Locale.ROOT);
  }

  private static byte[] hash(char[] password, byte[] salt, int iterations) {
    try {
      return SecretKeyFactory.getInstance("PBKDF2WithHmacSHA256")
          .generateSecret(new PBEKeySpec(password, salt, iterations, 256)).getEncoded();
    } catch (GeneralSecurityException e) {
      throw new IllegalStateException("PBKDF2WithHmacSHA256 is missing from this JDK", e);
    }
  }

  /** The role of user {@code name} (who has logged in). */
  public Role role(String name) {
    String[] entry = users.get(name);
    return entry == null || entry.length == 5 && entry[4].equals("read") ? Role.READ : Role.WRITE;
  }

  @Override
  public CallHeaderAuthenticator.AuthResult validate(String username, String password) {
    String shown = username.length() > 64 ? username.substring(0, 64) + "..." : username;
    long now = System.nanoTime();
    synchronized (failures) {
      java.util.ArrayDeque<Long> recent = failures.get(username);
      if (recent != null) {
        while (!recent.isEmpty() && now - recent.peekFirst() > FAILURE_WINDOW_NANOS) {
          recent.pollFirst();
        }
        if (recent.size() >= MAX_FAILURES) {
          long wait = (FAILURE_WINDOW_NANOS - (now - recent.peekFirst())) / 1_000_000_000L + 1;
          LOG.warn("login refused for user name '{}': {} failures in the last minute", shown, recent.size());
          throw CallStatus.UNAUTHENTICATED.withDescription("too many failed logins for this user name: retry in " + wait
              + " s").toRuntimeException();
        }
      }
    }
    String[] entry = users.getOrDefault(username, nobody);
    Base64.Decoder b64 = Base64.getDecoder();
    byte[] want = b64.decode(entry[3]);
    byte[] got = hash(password.toCharArray(), b64.decode(entry[2]), Integer.parseInt(entry[1]));
    if (MessageDigest.isEqual(want, got) && entry != nobody) {
      synchronized (failures) {
        failures.remove(username);
      }
      return () -> username;
    }
    int count;
    synchronized (failures) {
      java.util.ArrayDeque<Long> recent = failures.computeIfAbsent(username, k -> new java.util.ArrayDeque<>());
      recent.addLast(now);
      count = recent.size();
    }
    LOG.warn("failed login for user name '{}' ({} in the last minute)", shown, count);
    throw CallStatus.UNAUTHENTICATED.withDescription("wrong user name or password").toRuntimeException();
  }
}
