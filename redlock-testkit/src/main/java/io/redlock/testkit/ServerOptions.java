package io.redlock.testkit;

import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;

/**
 * The settings every server of one fleet shares, and the redis-server command line they make.
 *
 * <p>Immutable, hence thread-safe.
 */
record ServerOptions(
    String aclUser,
    String aclPassword,
    boolean appendOnly,
    Duration commandTimeout,
    TestCertificate tls) {

  static final String HOST = "127.0.0.1";

  boolean hasAclUser() {
    return aclUser != null;
  }

  /**
   * Builds the command line. Everything is passed as {@code --name value...} directives: a
   * redis-server quotes each argument it receives before parsing the joined line as config,
   * so the ACL rules must arrive as separate arguments ({@code --user alice on >pw ~* ...}),
   * not as one string with spaces, which redis would read as a single user name.
   */
  boolean hasTls() {
    return tls != null;
  }

  /**
   * The command line; {@code tlsPort} is used only with TLS, which keeps the plain port open
   * too, on loopback, for the test kit's own {@code command()} calls.
   */
  List<String> commandLine(Path binary, int port, int tlsPort, Path dir) {
    List<String> args =
        new ArrayList<>(
            List.of(
                binary.toString(),
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
    if (hasAclUser()) {
      args.addAll(List.of("--user", aclUser, "on", ">" + aclPassword, "~*", "&*", "+@all"));
      args.addAll(List.of("--user", "default", "off"));
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
              "no"));
    }
    if (RedisBinary.majorVersion() >= 7) {
      // Redis 7 refuses DEBUG by default; tests use DEBUG SLEEP to simulate a slow node.
      args.addAll(List.of("--enable-debug-command", "yes"));
    }
    return args;
  }
}
