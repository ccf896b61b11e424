package io.redlock.testkit;

import java.nio.file.Path;
import java.security.SecureRandom;
import java.time.Duration;
import java.util.ArrayList;
import java.util.HexFormat;
import java.util.List;

/**
 * The settings every server of one fleet shares, and the redis-server configuration they make.
 *
 * <p>Every server requires a password: the fleet's random {@code password} for the
 * {@code default} user (or, with an ACL user, that user's own; {@code default} is then off),
 * and the test kit's own {@link #ADMIN_USER} with {@code adminPassword} for
 * {@link RedisServers#command}. Secrets go into a config file in the node's 0700 data folder,
 * never onto the command line (which {@code ps} shows every local user). {@code MODULE} is
 * renamed away, and the clients' users may not run {@code DEBUG} or {@code CONFIG} (but
 * {@code CONFIG GET}), so that nobody but the test kit itself can make the server load code or
 * write files where it likes.
 *
 * <p>Immutable, hence thread-safe.
 */
record ServerOptions(
    String aclUser,
    String aclPassword,
    boolean appendOnly,
    Duration commandTimeout,
    TestCertificate tls,
    boolean tlsClientAuth,
    String password,
    String adminPassword) {

  static final String HOST = "127.0.0.1";

  /** The user the test kit itself authenticates as: every right, for faults and set-up. */
  static final String ADMIN_USER = "redlock-testkit";

  /** What a client's user may run: everything but what loads code or writes files. */
  static final String CLIENT_RIGHTS = "~* &* +@all -debug -config +config|get";

  private static final SecureRandom RANDOM = new SecureRandom();

  /** A fresh random password: 128 bits, in hex. */
  static String randomPassword() {
    byte[] bytes = new byte[16];
    RANDOM.nextBytes(bytes);
    return HexFormat.of().formatHex(bytes);
  }

  /** Never shows a secret. */
  @Override
  public String toString() {
    return "ServerOptions[aclUser="
        + aclUser
        + ", appendOnly="
        + appendOnly
        + ", commandTimeout="
        + commandTimeout
        + ", tls="
        + (tls != null)
        + "]";
  }

  /** {@code text} as one quoted argument of a redis config file line. */
  private static String quoted(String text) {
    StringBuilder out = new StringBuilder("\"");
    for (char c : text.toCharArray()) {
      if (c == '"' || c == '\\') {
        out.append('\\').append(c);
      } else if (c < 0x20 || c == 0x7f) {
        out.append(String.format("\\x%02x", (int) c));
      } else {
        out.append(c);
      }
    }
    return out.append('"').toString();
  }

  /**
   * The config file's text: the users and their passwords, and {@code MODULE} renamed away.
   * The file is written with mode 0600 into the node's own 0700 folder.
   */
  String configFile() {
    StringBuilder text = new StringBuilder();
    text.append("rename-command MODULE \"\"\n");
    if (hasAclUser()) {
      text.append("user default off\n");
      text.append("user ").append(aclUser).append(" on ").append(quoted(">" + aclPassword));
      text.append(" ~* &* +@all\n");
    } else {
      text.append("user default on >").append(password).append(' ').append(CLIENT_RIGHTS);
      text.append('\n');
    }
    text.append("user ").append(ADMIN_USER).append(" on >").append(adminPassword);
    text.append(" ~* &* +@all\n");
    return text.toString();
  }

  boolean hasAclUser() {
    return aclUser != null;
  }

  boolean hasTls() {
    return tls != null;
  }

  /**
   * The command line: the config file with the secrets ({@link #configFile()}), then the
   * settings that are no secret as {@code --name value} directives; {@code tlsPort} is used only with TLS, which keeps the plain port open
   * too, on loopback, for the test kit's own {@code command()} calls.
   */
  List<String> commandLine(Path binary, Path configFile, int port, int tlsPort, Path dir) {
    List<String> args =
        new ArrayList<>(
            List.of(
                binary.toString(),
                configFile.toString(),
                "--bind",
                HOST,
                "--port",
                Integer.toString(port),
                "--protected-mode",
                "no",
                "--daemonize",
                "no",
                "--dir",
                dir.toString(),
                "--logfile",
                dir.resolve("redis.log").toString(),
                "--loglevel",
                "notice",
                // No RDB snapshots ever: a restarted node is empty unless AOF is on.
                "--save",
                ""));
    if (appendOnly) {
      // fsync on every write: an acknowledged write survives even a machine-level crash,
      // which is the configuration the Redlock analysis asks for.
      args.addAll(List.of("--appendonly", "yes", "--appendfsync", "always"));
    } else {
      args.addAll(List.of("--appendonly", "no"));
    }
    if (hasTls()) {
      args.addAll(
          List.of(
              "--tls-port",
              Integer.toString(tlsPort),
              "--tls-cert-file",
              tls.certificate().toString(),
              "--tls-key-file",
              tls.privateKey().toString(),
              "--tls-ca-cert-file",
              tls.certificate().toString(),
              "--tls-auth-clients",
              tlsClientAuth ? "yes" : "no"));
    }
    if (RedisBinary.majorVersion() >= 7) {
      // Redis 7 refuses DEBUG by default; tests use DEBUG SLEEP to simulate a slow node.
      args.addAll(List.of("--enable-debug-command", "yes"));
    }
    return args;
  }
}
