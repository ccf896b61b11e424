package io.redlock.testkit;

import java.io.File;
import java.io.IOException;
import java.io.InputStream;
import java.io.UncheckedIOException;
import java.net.URL;
import java.nio.charset.StandardCharsets;
import java.nio.file.AtomicMoveNotSupportedException;
import java.nio.file.Files;
import java.nio.file.LinkOption;
import java.nio.file.Path;
import java.nio.file.Paths;
import java.nio.file.StandardCopyOption;
import java.nio.file.StandardOpenOption;
import java.nio.file.attribute.PosixFileAttributes;
import java.nio.file.attribute.PosixFilePermission;
import java.nio.file.attribute.PosixFilePermissions;
import java.nio.file.attribute.UserPrincipal;
import java.security.MessageDigest;
import java.security.NoSuchAlgorithmException;
import java.util.ArrayList;
import java.util.HexFormat;
import java.util.List;
import java.util.Locale;
import java.util.Optional;
import java.util.concurrent.TimeUnit;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * Finds the {@code redis-server} executable that test fleets run.
 *
 * <p>Sources are tried in this order, and the first that yields an executable wins:
 * <ol>
 *   <li>an explicit path in the system property {@value #PATH_PROPERTY} or, failing that, the
 *       environment variable {@value #PATH_ENV}; if one is set but not executable, that is an
 *       error rather than a reason to fall back, since somebody asked for that binary;</li>
 *   <li>{@code redis-server} on the {@code PATH};</li>
 *   <li>the binary for this {@code os.name}/{@code os.arch} shipped as a class-path resource in
 *       the embedded-redis jar, extracted once into a per-user cache,
 *       {@code ~/.cache/redlock-testkit/<resource>-<digest>/redis-server} (or under
 *       {@code $XDG_CACHE_HOME}): folders of this user only (0700, owner checked, no symbolic
 *       link followed), and a cached file runs only if its SHA-256 digest is the embedded
 *       binary's, so a file another user planted there is never run.</li>
 * </ol>
 * The choice is made once per JVM and logged once at INFO. If nothing is found,
 * {@link #locate()} throws an {@link IllegalStateException} that lists every place it tried.
 *
 * <p>Thread-safe: the lookup runs once under a lock (a failed lookup is retried), and the extraction is
 * atomic (temporary file, then move), so concurrent JVMs sharing the cache directory never see
 * a half-written binary.
 *
 * @since 0.1.0
 */
public final class RedisBinary {

  /** System property naming an explicit redis-server path. */
  public static final String PATH_PROPERTY = "redlock.redis-server";

  /** Environment variable naming an explicit redis-server path. */
  public static final String PATH_ENV = "REDLOCK_REDIS_SERVER";

  private static final Logger LOG = LoggerFactory.getLogger(RedisBinary.class);
  private static final Pattern VERSION = Pattern.compile("(?:(\\w+) server )?v=(\\d+(?:\\.\\d+)*)");

  private RedisBinary() {}

  /**
   * Returns the redis-server executable to run, locating (and if need be extracting) it on
   * first use.
   *
   * @return an absolute path to an executable file
   * @throws IllegalStateException if no executable was found; the message names every source
   *     that was tried
   */
  public static Path locate() {
    return located().path;
  }

  /**
   * Returns the version the located binary reports with {@code --version}, e.g.
   * {@code "6.2.11"}.
   *
   * @return the version, or empty if the binary did not report one in a recognisable form
   * @throws IllegalStateException if no binary can be located
   */
  public static Optional<String> version() {
    return Optional.ofNullable(located().version);
  }

  /**
   * Returns which server the located binary is, by the name it gives with {@code --version}:
   * {@code "redis"} ({@code "Redis server v=6.2.11 ..."}) or {@code "valkey"} ({@code "Valkey
   * server v=8.0.1 ..."}), in lower case. Tests of behaviour that differs between the two (the
   * version a client reads, the words of an error) ask this.
   *
   * @return the server's name, or empty if the binary did not give one in a recognisable form
   * @throws IllegalStateException if no binary can be located
   */
  public static Optional<String> serverName() {
    return Optional.ofNullable(located().name);
  }

  /** The major version, or 0 when unknown; decides which version-specific flags to pass. */
  static int majorVersion() {
    return version().map(v -> Integer.parseInt(v.split("\\.")[0])).orElse(0);
  }

  /** The search result; written once under the class lock, then only read. */
  private static volatile Located located;

  private static Located located() {
    Located result = located;
    if (result == null) {
      synchronized (RedisBinary.class) {
        result = located;
        if (result == null) {
          // A failure is not cached: the next caller gets the same clear message
          // instead of a NoClassDefFoundError-style echo of the first one.
          result = search();
          located = result;
        }
      }
    }
    return result;
  }

  private static Located search() {
    List<String> tried = new ArrayList<>();
    Path found = fromExplicitSetting(tried);
    String source = "explicit setting";
    if (found == null) {
      found = fromSearchPath(tried);
      source = "PATH";
    }
    if (found == null) {
      found = fromEmbeddedRedisJar(tried);
      source = "embedded-redis jar";
    }
    if (found == null) {
      throw new IllegalStateException(
          "No redis-server executable found. Tried: "
              + String.join("; ", tried)
              + ". Install Redis, put redis-server on the PATH,"
              + " or set -D"
              + PATH_PROPERTY
              + "=/path/to/redis-server.");
    }
    Matcher reported = VERSION.matcher(readVersion(found));
    boolean known = reported.find();
    String version = known ? reported.group(2) : null;
    String name =
        known && reported.group(1) != null ? reported.group(1).toLowerCase(Locale.ROOT) : null;
    LOG.info(
        "Using redis-server {} ({} version {}, from {})",
        found,
        name == null ? "server" : name,
        version == null ? "unknown" : version,
        source);
    return new Located(found, version, name);
  }

  private static final class Located {
    final Path path;
    final String version;
    final String name;

    Located(Path path, String version, String name) {
      this.path = path;
      this.version = version;
      this.name = name;
    }
  }

  private static Path fromExplicitSetting(List<String> tried) {
    String setting = System.getProperty(PATH_PROPERTY);
    String origin = "system property " + PATH_PROPERTY;
    if (setting == null || setting.isBlank()) {
      setting = System.getenv(PATH_ENV);
      origin = "environment variable " + PATH_ENV;
    }
    if (setting == null || setting.isBlank()) {
      tried.add(
          "system property "
              + PATH_PROPERTY
              + " and environment variable "
              + PATH_ENV
              + " (neither set)");
      return null;
    }
    Path path = Paths.get(setting).toAbsolutePath();
    if (!Files.isRegularFile(path) || !Files.isExecutable(path)) {
      throw new IllegalStateException(
          origin + " names " + path + ", which is not an executable file");
    }
    return path;
  }

  private static Path fromSearchPath(List<String> tried) {
    String searchPath = System.getenv("PATH");
    if (searchPath != null) {
      for (String dir : searchPath.split(File.pathSeparator)) {
        if (dir.isEmpty()) {
          continue;
        }
        Path candidate = Paths.get(dir, "redis-server");
        if (Files.isRegularFile(candidate) && Files.isExecutable(candidate)) {
          return candidate.toAbsolutePath();
        }
      }
    }
    tried.add("redis-server on PATH (" + searchPath + ")");
    return null;
  }

  private static Path fromEmbeddedRedisJar(List<String> tried) {
    List<String> names =
        resourceNamesFor(System.getProperty("os.name"), System.getProperty("os.arch"));
    if (names.isEmpty()) {
      tried.add(
          "embedded-redis binary (none shipped for os.name="
              + System.getProperty("os.name")
              + ", os.arch="
              + System.getProperty("os.arch")
              + ")");
      return null;
    }
    ClassLoader loader = RedisBinary.class.getClassLoader();
    for (String name : names) {
      URL resource = loader.getResource(name);
      if (resource != null) {
        return extract(resource, name);
      }
    }
    tried.add(
        "class-path resources "
            + names
            + " (is com.github.codemonstur:embedded-redis on the class path?)");
    return null;
  }

  /**
   * The resource names embedded-redis 1.4.x ships per platform. Windows is left out on
   * purpose: faults are injected with POSIX signals.
   */
  static List<String> resourceNamesFor(String osName, String osArch) {
    String os = osName == null ? "" : osName.toLowerCase(Locale.ROOT);
    String arch = osArch == null ? "" : osArch.toLowerCase(Locale.ROOT);
    boolean amd64 = arch.equals("amd64") || arch.equals("x86_64");
    boolean arm64 = arch.equals("aarch64") || arch.equals("arm64");
    boolean x86 = arch.equals("x86") || arch.equals("i386") || arch.equals("i686");
    if (os.contains("linux")) {
      if (amd64) {
        return List.of("redis-server-6.2.6-v5-linux-amd64");
      }
      if (arm64) {
        return List.of("redis-server-6.2.7-linux-arm64");
      }
      if (x86) {
        return List.of("redis-server-6.2.7-linux-386");
      }
    } else if (os.contains("mac") || os.contains("darwin")) {
      if (amd64) {
        return List.of("redis-server-6.2.6-v5-darwin-amd64");
      }
      if (arm64) {
        return List.of("redis-server-6.2.6-v5-darwin-arm64");
      }
    }
    return List.of();
  }

  /**
   * Copies the resource out of the jar into the per-user cache ({@link #cacheRoot()}), or
   * reuses an earlier copy whose SHA-256 digest matches the resource's. The folder must be a
   * real folder (not a symbolic link) owned by this user, and is made 0700; a cached file that
   * is a link, belongs to another user or has another digest is never run: it is replaced.
   * The folder is named after the resource and its digest, so another embedded-redis version
   * never reuses a stale binary.
   */
  private static Path extract(URL resource, String name) {
    return extract(resource, name, cacheRoot());
  }

  /** {@code $XDG_CACHE_HOME/redlock-testkit}, else {@code ~/.cache/redlock-testkit}. */
  static Path cacheRoot() {
    String xdg = System.getenv("XDG_CACHE_HOME");
    Path base =
        xdg != null && !xdg.isBlank() && Paths.get(xdg).isAbsolute()
            ? Paths.get(xdg)
            : Paths.get(System.getProperty("user.home"), ".cache");
    return base.resolve("redlock-testkit");
  }

  static Path extract(URL resource, String name, Path root) {
    try {
      byte[] content;
      try (InputStream in = resource.openStream()) {
        content = in.readAllBytes();
      }
      String digest = sha256(content);
      Path dir = privateFolder(privateFolder(root).resolve(name + "-" + digest.substring(0, 16)));
      Path target = dir.resolve("redis-server");
      if (isOurs(target, digest)) {
        return target;
      }
      Path temp =
          Files.createTempFile(
              dir,
              "redis-server",
              ".part",
              PosixFilePermissions.asFileAttribute(PosixFilePermissions.fromString("rwx------")));
      try {
        Files.write(temp, content);
        try {
          Files.move(
              temp, target, StandardCopyOption.ATOMIC_MOVE, StandardCopyOption.REPLACE_EXISTING);
        } catch (AtomicMoveNotSupportedException e) {
          Files.move(temp, target, StandardCopyOption.REPLACE_EXISTING);
        }
      } finally {
        Files.deleteIfExists(temp);
      }
      if (!isOurs(target, digest)) {
        throw new IOException(target + " changed while it was written");
      }
      return target;
    } catch (IOException e) {
      throw new UncheckedIOException(
          "Could not extract " + resource + " into the cache folder " + root, e);
    }
  }

  /**
   * Creates {@code dir} (0700) or checks it: a folder, not a symbolic link, owned by this
   * user; its mode is then set to 0700.
   *
   * @throws IOException naming what is wrong with it
   */
  private static Path privateFolder(Path dir) throws IOException {
    if (!Files.exists(dir, LinkOption.NOFOLLOW_LINKS)) {
      Files.createDirectories(dir.getParent());
      try {
        Files.createDirectory(
            dir,
            PosixFilePermissions.asFileAttribute(PosixFilePermissions.fromString("rwx------")));
      } catch (java.nio.file.FileAlreadyExistsException raced) {
        // made meanwhile by another JVM (or user): checked below like any existing folder
      }
    }
    PosixFileAttributes attributes =
        Files.readAttributes(dir, PosixFileAttributes.class, LinkOption.NOFOLLOW_LINKS);
    if (!attributes.isDirectory()) {
      throw new IOException(
          dir + " is not a folder" + (attributes.isSymbolicLink() ? " (a symbolic link)" : ""));
    }
    if (!attributes.owner().equals(currentUser())) {
      throw new IOException(
          dir
              + " belongs to "
              + attributes.owner().getName()
              + ", not to "
              + currentUser().getName()
              + "; remove it or set XDG_CACHE_HOME to a folder of your own");
    }
    Files.setPosixFilePermissions(dir, PosixFilePermissions.fromString("rwx------"));
    return dir;
  }

  /** Whether {@code file} is a regular file (no link) of this user with that SHA-256 digest. */
  private static boolean isOurs(Path file, String digest) throws IOException {
    if (!Files.exists(file, LinkOption.NOFOLLOW_LINKS)) {
      return false;
    }
    PosixFileAttributes attributes =
        Files.readAttributes(file, PosixFileAttributes.class, LinkOption.NOFOLLOW_LINKS);
    if (!attributes.isRegularFile() || !attributes.owner().equals(currentUser())) {
      LOG.warn("Not running {}: a symbolic link or not owned by this user; replacing it", file);
      return false;
    }
    byte[] bytes;
    try (java.nio.channels.SeekableByteChannel channel =
        Files.newByteChannel(
            file, java.util.Set.of(StandardOpenOption.READ, LinkOption.NOFOLLOW_LINKS))) {
      bytes = java.nio.channels.Channels.newInputStream(channel).readAllBytes();
    }
    if (!sha256(bytes).equals(digest)) {
      LOG.warn(
          "Not running {}: its SHA-256 digest is not the embedded binary's; replacing it", file);
      return false;
    }
    if (!attributes.permissions().contains(PosixFilePermission.OWNER_EXECUTE)) {
      Files.setPosixFilePermissions(file, PosixFilePermissions.fromString("rwx------"));
    }
    return true;
  }

  private static UserPrincipal currentUser() throws IOException {
    UserPrincipal user = currentUser;
    if (user == null) {
      // The owner of a file this process just made is this process's user, whatever
      // user.name says.
      Path probe = Files.createTempFile("redlock-testkit-owner", ".probe");
      try {
        user = Files.getOwner(probe);
      } finally {
        Files.deleteIfExists(probe);
      }
      currentUser = user;
    }
    return user;
  }

  private static volatile UserPrincipal currentUser;

  private static String sha256(byte[] content) {
    try {
      return HexFormat.of().formatHex(MessageDigest.getInstance("SHA-256").digest(content));
    } catch (NoSuchAlgorithmException e) {
      throw new IllegalStateException("the JDK has no SHA-256", e);
    }
  }

  /** What {@code binary --version} prints, or an empty string if it did not end in time. */
  private static String readVersion(Path binary) {
    try {
      Process process =
          new ProcessBuilder(binary.toString(), "--version").redirectErrorStream(true).start();
      String output;
      try (InputStream in = process.getInputStream()) {
        output = new String(in.readAllBytes(), StandardCharsets.UTF_8);
      }
      if (!process.waitFor(10, TimeUnit.SECONDS)) {
        process.destroyForcibly();
        return "";
      }
      return output;
    } catch (IOException e) {
      throw new UncheckedIOException("Could not run " + binary + " --version", e);
    } catch (InterruptedException e) {
      Thread.currentThread().interrupt();
      return "";
    }
  }
}
