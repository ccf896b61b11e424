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
record ServerOptions(String aclUser, String aclPassword, boolean appendOnly, Duration commandTimeout) {

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
    List<String> commandLine(Path binary, int port, Path dir) {
        List<String> args = new ArrayList<>(List.of(binary.toString(),
                "--bind", HOST,
                "--port", Integer.toString(port),
                "--protected-mode", "no",
                "--daemonize", "no",
                "--dir", dir.toString(),
                "--logfile", dir.resolve("redis.log").toString(),
                "--loglevel", "notice",
                // No RDB snapshots ever: a restarted node is empty unless AOF is on.
                "--save", ""));
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
        if (RedisBinary.majorVersion() >= 7) {
            // Redis 7 refuses DEBUG by default; tests use DEBUG SLEEP to simulate a slow node.
            args.addAll(List.of("--enable-debug-command", "yes"));
        }
        return args;
    }
}
