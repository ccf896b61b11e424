package io.redlock.cli;

import io.redlock.RedlockConfig;
import io.redlock.RedlockConfigException;
import io.redlock.TlsSettings;
import java.io.IOException;
import java.io.Reader;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.Properties;
import java.util.Set;
import java.util.TreeSet;
import picocli.CommandLine.Model.CommandSpec;
import picocli.CommandLine.Option;
import picocli.CommandLine.ParameterException;
import picocli.CommandLine.Spec;
import picocli.CommandLine.TypeConversionException;

/**
 * How to reach the Redis nodes, shared by {@code exec} and {@code status} as a picocli mixin.
 *
 * <p>Each setting is taken from the first place that has it: the command line, then the
 * environment ({@code REDLOCK_NODES}, {@code REDLOCK_PASSWORD}, {@code REDLOCK_CONFIG}), then
 * the config file ({@code --config}, or {@code REDLOCK_CONFIG}), a {@code key=value} file with
 * the keys {@link #CONFIG_KEYS}. The password never has to be on a command line: it comes from
 * {@code --password-file}, {@code REDLOCK_PASSWORD} or the config file's {@code password-file}.
 * Every bad value is refused with a {@link ParameterException} naming where it came from.
 */
public final class ConnectionOptions {

  static final String ENV_NODES = "REDLOCK_NODES";
  static final String ENV_PASSWORD = "REDLOCK_PASSWORD";
  static final String ENV_CONFIG = "REDLOCK_CONFIG";

  /** The keys a config file may hold. */
  static final Set<String> CONFIG_KEYS =
      new TreeSet<>(
          List.of(
              "nodes",
              "username",
              "password-file",
              "ttl",
              "max-ttl",
              "node-timeout",
              "connect-timeout",
              "key-prefix",
              "restart-guard",
              "tls-ca",
              "tls-cert",
              "tls-key"));

  @Spec(Spec.Target.MIXEE)
  CommandSpec spec;

  @Option(
      names = "--nodes",
      split = ",",
      paramLabel = "<uri>",
      description =
          "The Redis masters, comma-separated: redis://host[:port][/db] or rediss://... for"
              + " TLS (else REDLOCK_NODES, else nodes= in the config file). Give the user with"
              + " --username and the password with --password-file: a password written here"
              + " shows in ps and in shell history (and redis://name@host is read as the"
              + " password 'name', not as a user).")
  List<String> nodes;

  @Option(
      names = "--config",
      paramLabel = "<file>",
      description =
          "A key=value file with nodes, username, password-file, ttl, max-ttl,"
              + " node-timeout,"
              + " connect-timeout, key-prefix (else the file named by REDLOCK_CONFIG).")
  Path config;

  @Option(
      names = "--username",
      paramLabel = "<name>",
      description = "ACL user for nodes whose URI names none.")
  String username;

  @Option(
      names = "--password-file",
      paramLabel = "<file>",
      description =
          "File holding the password (one line) for nodes whose URI holds none"
              + " (else REDLOCK_PASSWORD, else password-file= in the config file).")
  Path passwordFile;

  @Option(
      names = "--max-ttl",
      converter = DurationConverter.class,
      paramLabel = "<duration>",
      description =
          "The longest ttl any client of the cluster uses; the restart guard holds a"
              + " restarted node back this long. The same on every client (default: 1m; else"
              + " max-ttl= in the config file).")
  Duration maxTtl;

  @Option(
      names = "--node-timeout",
      converter = DurationConverter.class,
      paramLabel = "<duration>",
      description = "Time one node has to answer one request (default: 50ms).")
  Duration nodeTimeout;

  @Option(
      names = "--connect-timeout",
      converter = DurationConverter.class,
      paramLabel = "<duration>",
      description = "Time to wait for the first connection to each node (default: 2s).")
  Duration connectTimeout;

  @Option(
      names = "--key-prefix",
      paramLabel = "<prefix>",
      description = "Prepended to the resource name to form the Redis key (default: none).")
  String keyPrefix;

  @Option(
      names = "--tls-ca",
      paramLabel = "<pem>",
      description =
          "PEM file of the certificates that sign the nodes' TLS certificates (a private CA):"
              + " trusted for the nodes only (default: the JVM's trust store; else tls-ca= in"
              + " the config file).")
  Path tlsCa;

  @Option(
      names = "--tls-cert",
      paramLabel = "<pem>",
      description =
          "PEM file of the client certificate chain, for nodes that require one"
              + " (tls-auth-clients yes); with --tls-key (else tls-cert= in the config file).")
  Path tlsCert;

  @Option(
      names = "--tls-key",
      paramLabel = "<pem>",
      description =
          "PEM file (PKCS#8, not encrypted) of the client certificate's private key (else"
              + " tls-key= in the config file).")
  Path tlsKey;

  @Option(
      names = "--tls-allow-unverified",
      description =
          "Accept node URIs with verifyPeer=NONE (TLS without certificate checks: anyone on"
              + " the path can pose as a node). Refused without this option.")
  boolean tlsAllowUnverified;

  @Option(
      names = "--no-restart-guard",
      description =
          "Count a node whose Redis process started less than max-ttl ago (by default"
              + " it is held back, as it may have forgotten locks, unless 'redlock init' declared"
              + " it fresh or it persists every write). Only to show what goes wrong; else"
              + " restart-guard=false in the config file.")
  boolean noRestartGuard;

  /** The environment; replaced by tests. */
  Map<String, String> env = System.getenv();

  /** The settings resolved from the command line, environment and config file. */
  record Settings(
      List<String> nodes,
      String username,
      String password,
      Optional<Duration> ttl,
      Optional<Duration> maxTtl,
      Duration nodeTimeout,
      Duration connectTimeout,
      String keyPrefix,
      boolean restartGuard,
      String nodesSource,
      TlsSettings tls) {

    /** A config builder with these settings (ttl and retries left to the caller). */
    RedlockConfig.Builder builder() {
      RedlockConfig.Builder b =
          RedlockConfig.builder()
              .nodes(nodes)
              .nodeTimeout(nodeTimeout)
              .connectTimeout(connectTimeout)
              .keyPrefix(keyPrefix)
              .restartGuard(restartGuard)
              .tls(tls);
      maxTtl.ifPresent(b::maxTtl);
      if (username != null) {
        b.username(username);
      }
      if (password != null) {
        b.password(password);
      }
      return b;
    }

    /** The Redis key of {@code resource}. */
    String key(String resource) {
      return keyPrefix + resource;
    }
  }

  /**
   * Resolves the settings.
   *
   * @throws ParameterException naming the option, variable or config key that is wrong
   */
  Settings resolve() {
    Path configFile = config;
    String configSource = "--config";
    if (configFile == null && notBlank(env.get(ENV_CONFIG))) {
      configFile = Path.of(env.get(ENV_CONFIG));
      configSource = ENV_CONFIG;
    }
    Properties file = configFile == null ? new Properties() : load(configFile, configSource);
    String inFile = configFile == null ? "" : "config file " + configFile + ": ";

    if (configFile != null) {
      warnIfOthersCanRead(configFile, "config file");
    }
    List<String> nodeList;
    String nodesSource;
    if (nodes != null) {
      nodesSource = "option '--nodes'";
      nodeList = nodeList(nodes, nodesSource);
      for (String node : nodeList) {
        if (hasUserInfo(node)) {
          warn(
              "a node in --nodes carries credentials ("
                  + Printable.of(StatusCommand.displayName(node))
                  + "): they show in ps and in shell history; give the user with --username and"
                  + " the password with --password-file, REDLOCK_PASSWORD or password-file= in"
                  + " a config file"
                  + (lonePassword(node)
                      ? " (a lone 'name@' before the host is read as a password, not a user)"
                      : ""));
          break;
        }
      }
    } else if (env.get(ENV_NODES) != null) {
      nodesSource = "environment variable " + ENV_NODES;
      nodeList = nodeList(List.of(env.get(ENV_NODES).split(",", -1)), nodesSource);
    } else if (file.getProperty("nodes") != null) {
      nodesSource = inFile + "key 'nodes'";
      nodeList = nodeList(List.of(file.getProperty("nodes").split(",", -1)), nodesSource);
    } else {
      throw error(
          "Missing nodes: give --nodes, "
              + ENV_NODES
              + " or a config file (--config) with nodes=redis://host:port,...");
    }

    String user = username != null ? username : blankToNull(file.getProperty("username"));
    String password;
    if (passwordFile != null) {
      password = readPassword(passwordFile, "option '--password-file'");
    } else if (env.get(ENV_PASSWORD) != null) {
      password = env.get(ENV_PASSWORD);
      if (password.isEmpty()) {
        throw error("Invalid value in environment variable " + ENV_PASSWORD + ": it is empty");
      }
    } else if (notBlank(file.getProperty("password-file"))) {
      Path p = Path.of(file.getProperty("password-file").trim());
      if (!p.isAbsolute() && configFile.toAbsolutePath().getParent() != null) {
        p = configFile.toAbsolutePath().getParent().resolve(p);
      }
      password = readPassword(p, inFile + "key 'password-file'");
    } else {
      password = null;
    }

    Optional<Duration> ttl = Optional.ofNullable(fileDuration(file, "ttl", inFile));
    Optional<Duration> longest =
        Optional.ofNullable(maxTtl != null ? maxTtl : fileDuration(file, "max-ttl", inFile));
    Duration nt = nodeTimeout != null ? nodeTimeout : fileDuration(file, "node-timeout", inFile);
    Duration ct =
        connectTimeout != null ? connectTimeout : fileDuration(file, "connect-timeout", inFile);
    String prefix = keyPrefix != null ? keyPrefix : file.getProperty("key-prefix", "").trim();
    boolean guard =
        !noRestartGuard
            && fileBoolean(file, "restart-guard", inFile, RedlockConfig.DEFAULT_RESTART_GUARD);
    TlsSettings tls = tls(file, configFile, inFile);
    if (!tls.allowUnverified()) {
      for (String node : nodeList) {
        if (node.toLowerCase(java.util.Locale.ROOT)
            .matches(".*[?&]verifypeer=(none|false)(&.*)?")) {
          throw error(
              "Invalid value in "
                  + nodesSource
                  + ": "
                  + Printable.of(StatusCommand.displayName(node))
                  + " has verifyPeer=NONE, which switches TLS certificate checks off (anyone on"
                  + " the path can pose as the node); give its CA with --tls-ca, or accept the"
                  + " risk with --tls-allow-unverified");
        }
      }
    }
    return new Settings(
        nodeList,
        user,
        password,
        ttl,
        longest,
        nt != null ? nt : RedlockConfig.DEFAULT_NODE_TIMEOUT,
        ct != null ? ct : RedlockConfig.DEFAULT_CONNECT_TIMEOUT,
        prefix,
        guard,
        nodesSource,
        tls);
  }

  /** The TLS settings from the options, else the config file's keys. */
  private TlsSettings tls(Properties file, Path configFile, String inFile) {
    Path ca = tlsCa != null ? tlsCa : filePath(file, "tls-ca", configFile);
    Path cert = tlsCert != null ? tlsCert : filePath(file, "tls-cert", configFile);
    Path key = tlsKey != null ? tlsKey : filePath(file, "tls-key", configFile);
    if ((cert == null) != (key == null)) {
      throw error(
          "Invalid TLS settings: a client certificate needs both --tls-cert and --tls-key"
              + " (or tls-cert= and tls-key= in "
              + (inFile.isEmpty() ? "the config file" : inFile.substring(0, inFile.length() - 2))
              + ")");
    }
    TlsSettings.Builder tls = TlsSettings.builder().allowUnverified(tlsAllowUnverified);
    if (ca != null) {
      tls.trustedCertificates(ca);
    }
    if (cert != null) {
      warnIfOthersCanRead(key, "TLS private key file");
      tls.clientCertificate(cert, key);
    }
    try {
      return tls.build();
    } catch (RedlockConfigException e) {
      throw error(
          "Invalid value in "
              + e.getMessage()
                  .replace("tls.trustedCertificates", "--tls-ca (or tls-ca=)")
                  .replace("tls.clientCertificate (certificate chain)", "--tls-cert (or tls-cert=)")
                  .replace("tls.clientCertificate (private key)", "--tls-key (or tls-key=)"));
    }
  }

  /** A path from the config file; relative to the config file's folder. */
  private static Path filePath(Properties file, String key, Path configFile) {
    String value = file.getProperty(key);
    if (value == null || value.isBlank()) {
      return null;
    }
    Path p = Path.of(value.trim());
    if (!p.isAbsolute() && configFile.toAbsolutePath().getParent() != null) {
      p = configFile.toAbsolutePath().getParent().resolve(p);
    }
    return p;
  }

  private boolean fileBoolean(Properties file, String key, String inFile, boolean fallback) {
    String value = file.getProperty(key);
    if (value == null) {
      return fallback;
    }
    return switch (value.trim().toLowerCase(java.util.Locale.ROOT)) {
      case "true", "yes", "on" -> true;
      case "false", "no", "off" -> false;
      default ->
          throw error(
              "Invalid value in "
                  + inFile
                  + "key '"
                  + key
                  + "': '"
                  + value.trim()
                  + "' is not accepted; use true or false");
    };
  }

  /**
   * Builds the configuration, turning a refused setting into a {@link ParameterException}
   * that names the option it came from.
   */
  RedlockConfig build(Settings settings, RedlockConfig.Builder builder) {
    try {
      return builder.build();
    } catch (RedlockConfigException e) {
      String message = e.getMessage();
      String setting = message.split("[ \\[:]", 2)[0];
      String where =
          switch (setting) {
            case "nodes" -> settings.nodesSource();
            case "ttl" -> "option '--ttl'";
            case "maxTtl" -> "option '--max-ttl'";
            case "nodeTimeout" -> "option '--node-timeout'";
            case "connectTimeout" -> "option '--connect-timeout'";
            case "maxWait" -> "option '--wait'";
            case "keyPrefix" -> "option '--key-prefix'";
            default -> "the settings";
          };
      throw error("Invalid value in " + where + ": " + message);
    }
  }

  private Properties load(Path file, String source) {
    Properties properties = new Properties();
    try (Reader reader = Files.newBufferedReader(file, StandardCharsets.UTF_8)) {
      properties.load(reader);
    } catch (IOException | IllegalArgumentException e) {
      throw error(
          "Invalid value for "
              + (source.startsWith("--")
                  ? "option '" + source + "'"
                  : "environment variable " + source)
              + ": cannot read config file "
              + file
              + " ("
              + describe(e)
              + ")");
    }
    for (String key : properties.stringPropertyNames()) {
      if (!CONFIG_KEYS.contains(key)) {
        throw error(
            "config file "
                + file
                + ": unknown key '"
                + key
                + "'"
                + (key.equals("password")
                    ? " (put the password in a file named by password-file)"
                    : " (known keys: " + String.join(", ", CONFIG_KEYS) + ")"));
      }
    }
    return properties;
  }

  private Duration fileDuration(Properties file, String key, String inFile) {
    String value = file.getProperty(key);
    if (value == null) {
      return null;
    }
    try {
      return new DurationConverter().convert(value);
    } catch (TypeConversionException e) {
      throw error(inFile + "invalid value for key '" + key + "': " + e.getMessage());
    }
  }

  private List<String> nodeList(List<String> given, String source) {
    List<String> list = new ArrayList<>();
    for (String node : given) {
      String trimmed = node.trim();
      if (trimmed.isEmpty()) {
        throw error("Invalid value in " + source + ": an empty node URI in the list");
      }
      list.add(trimmed);
    }
    return list;
  }

  /** Whether {@code node} has user info ({@code user:password@} or {@code password@}). */
  static boolean hasUserInfo(String node) {
    int schemeEnd = node.indexOf("://");
    int at = node.lastIndexOf('@');
    return schemeEnd >= 0 && at > schemeEnd;
  }

  /** Whether the user info of {@code node} has no colon: Lettuce reads it as a password. */
  static boolean lonePassword(String node) {
    int schemeEnd = node.indexOf("://");
    int at = node.lastIndexOf('@');
    return hasUserInfo(node) && node.substring(schemeEnd + 3, at).indexOf(':') < 0;
  }

  /**
   * Warns (on stderr) when {@code file} can be read by its group or by others: it holds a
   * password or names the file that does.
   */
  private void warnIfOthersCanRead(Path file, String what) {
    java.util.Set<java.nio.file.attribute.PosixFilePermission> permissions;
    try {
      permissions = Files.getPosixFilePermissions(file);
    } catch (IOException | UnsupportedOperationException e) {
      return; // unreadable: reading it reports that; no POSIX permissions: nothing to say
    }
    if (permissions.contains(java.nio.file.attribute.PosixFilePermission.GROUP_READ)
        || permissions.contains(java.nio.file.attribute.PosixFilePermission.OTHERS_READ)) {
      warn(
          what
              + " "
              + Printable.of(file.toString())
              + " can be read by "
              + (permissions.contains(java.nio.file.attribute.PosixFilePermission.OTHERS_READ)
                  ? "every user"
                  : "its group")
              + " (mode "
              + java.nio.file.attribute.PosixFilePermissions.toString(permissions)
              + "); make it readable by its owner only: chmod 600 "
              + Printable.of(file.toString()));
    }
  }

  private void warn(String message) {
    java.io.PrintWriter err = spec.commandLine().getErr();
    err.println(spec.qualifiedName() + ": warning: " + message);
    err.flush();
  }

  private String readPassword(Path file, String source) {
    warnIfOthersCanRead(file, "password file");
    String text;
    try {
      text = Files.readString(file, StandardCharsets.UTF_8);
    } catch (IOException e) {
      throw error(
          "Invalid value in " + source + ": cannot read " + file + " (" + describe(e) + ")");
    }
    String password = text.lines().findFirst().orElse("");
    if (password.isEmpty()) {
      throw error(
          "Invalid value in " + source + ": " + file + " holds no password on its" + " first line");
    }
    return password;
  }

  private static String describe(Exception e) {
    if (e instanceof java.nio.file.NoSuchFileException) {
      return "no such file";
    }
    if (e instanceof java.nio.file.AccessDeniedException) {
      return "permission denied";
    }
    return e.getMessage() != null ? e.getMessage() : e.getClass().getSimpleName();
  }

  private ParameterException error(String message) {
    return new ParameterException(spec.commandLine(), message);
  }

  private static boolean notBlank(String s) {
    return s != null && !s.isBlank();
  }

  private static String blankToNull(String s) {
    return notBlank(s) ? s.trim() : null;
  }
}
