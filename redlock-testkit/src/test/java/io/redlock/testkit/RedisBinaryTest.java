package io.redlock.testkit;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import java.io.UncheckedIOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.LinkOption;
import java.nio.file.Path;
import java.nio.file.attribute.PosixFilePermissions;
import java.nio.file.attribute.UserPrincipal;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

class RedisBinaryTest {

  @Test
  void mapsPlatformsToTheResourcesEmbeddedRedisShips() {
    assertThat(RedisBinary.resourceNamesFor("Linux", "amd64"))
        .containsExactly("redis-server-6.2.6-v5-linux-amd64");
    assertThat(RedisBinary.resourceNamesFor("Linux", "x86_64"))
        .containsExactly("redis-server-6.2.6-v5-linux-amd64");
    assertThat(RedisBinary.resourceNamesFor("Linux", "aarch64"))
        .containsExactly("redis-server-6.2.7-linux-arm64");
    assertThat(RedisBinary.resourceNamesFor("Linux", "i386"))
        .containsExactly("redis-server-6.2.7-linux-386");
    assertThat(RedisBinary.resourceNamesFor("Mac OS X", "x86_64"))
        .containsExactly("redis-server-6.2.6-v5-darwin-amd64");
    assertThat(RedisBinary.resourceNamesFor("Mac OS X", "aarch64"))
        .containsExactly("redis-server-6.2.6-v5-darwin-arm64");
    assertThat(RedisBinary.resourceNamesFor("Windows 11", "amd64")).isEmpty();
    assertThat(RedisBinary.resourceNamesFor("Linux", "riscv64")).isEmpty();
  }

  @Test
  void everyNamedResourceIsReallyOnTheClassPath() {
    for (String os : new String[] {"Linux", "Mac OS X"}) {
      for (String arch : new String[] {"amd64", "aarch64", "i386"}) {
        for (String name : RedisBinary.resourceNamesFor(os, arch)) {
          assertThat(RedisBinary.class.getClassLoader().getResource(name)).as(name).isNotNull();
        }
      }
    }
  }

  /** A stand-in for the embedded binary: a script that prints who it is. */
  private static Path resource(Path dir) throws Exception {
    Path real = dir.resolve("redis-server-test-resource");
    Files.writeString(real, "#!/bin/sh\necho real\n");
    return real;
  }

  /** A planted "binary": if it ever runs, it leaves {@code marker} behind. */
  private static String planted(Path marker) {
    return "#!/bin/sh\ntouch '" + marker + "'\necho planted\n";
  }

  @Test
  void aBinaryPlantedInTheCacheIsNeverRun(@TempDir Path dir) throws Exception {
    Path resource = resource(dir);
    Path root = dir.resolve("cache");
    Path first = RedisBinary.extract(resource.toUri().toURL(), "redis-server-test", root);
    assertThat(run(first)).isEqualTo("real");

    // Another user (or a stale run) replaces the cached file: same size, executable.
    Path marker = dir.resolve("planted-ran");
    String plantedScript = planted(marker);
    Files.writeString(first, plantedScript);
    Path again = RedisBinary.extract(resource.toUri().toURL(), "redis-server-test", root);
    assertThat(again).isEqualTo(first);
    assertThat(Files.readString(again)).isEqualTo(Files.readString(resource));
    assertThat(run(again)).isEqualTo("real");
    assertThat(marker).doesNotExist();
  }

  @Test
  void aSymbolicLinkInTheCacheIsReplacedNotFollowed(@TempDir Path dir) throws Exception {
    Path resource = resource(dir);
    Path root = dir.resolve("cache");
    Path cached = RedisBinary.extract(resource.toUri().toURL(), "redis-server-test", root);
    Path elsewhere = dir.resolve("elsewhere");
    Files.writeString(elsewhere, planted(dir.resolve("planted-ran")));
    Files.delete(cached);
    Files.createSymbolicLink(cached, elsewhere);

    Path again = RedisBinary.extract(resource.toUri().toURL(), "redis-server-test", root);
    assertThat(Files.isSymbolicLink(again)).isFalse();
    assertThat(Files.readString(again)).isEqualTo(Files.readString(resource));
    assertThat(Files.readString(elsewhere)).startsWith("#!/bin/sh\ntouch"); // not written through
  }

  @Test
  void theCacheFoldersAreTheUsersAlone(@TempDir Path dir) throws Exception {
    Path resource = resource(dir);
    Path root = dir.resolve("cache");
    Files.createDirectory(root);
    Files.setPosixFilePermissions(root, PosixFilePermissions.fromString("rwxrwxrwx"));
    Path cached = RedisBinary.extract(resource.toUri().toURL(), "redis-server-test", root);
    assertThat(PosixFilePermissions.toString(Files.getPosixFilePermissions(root)))
        .isEqualTo("rwx------");
    assertThat(PosixFilePermissions.toString(Files.getPosixFilePermissions(cached.getParent())))
        .isEqualTo("rwx------");

    // A cache root that is a link to a folder elsewhere is refused, not followed.
    Path linked = dir.resolve("linked-cache");
    Files.createSymbolicLink(linked, root);
    assertThatThrownBy(
            () -> RedisBinary.extract(resource.toUri().toURL(), "redis-server-test", linked))
        .isInstanceOf(UncheckedIOException.class)
        .hasRootCauseMessage(linked + " is not a folder (a symbolic link)");
  }

  @Test
  void aCacheFolderOfAnotherUserIsRefused(@TempDir Path dir) throws Exception {
    Path resource = resource(dir);
    Path root = dir.resolve("cache");
    Files.createDirectory(root);
    UserPrincipal other;
    try {
      other = dir.getFileSystem().getUserPrincipalLookupService().lookupPrincipalByName("nobody");
      Files.setOwner(root, other);
    } catch (java.io.IOException notRoot) {
      // Only root can give a folder away; as anyone else, a folder made by another user is
      // checked the same way but cannot be made here.
      org.junit.jupiter.api.Assumptions.abort("cannot give a folder to 'nobody': " + notRoot);
      return;
    }
    assertThatThrownBy(
            () -> RedisBinary.extract(resource.toUri().toURL(), "redis-server-test", root))
        .isInstanceOf(UncheckedIOException.class)
        .rootCause()
        .hasMessageContaining(root + " belongs to nobody");
    assertThat(Files.list(root)).isEmpty();
  }

  private static String run(Path binary) throws Exception {
    assertThat(Files.isSymbolicLink(binary)).isFalse();
    assertThat(Files.isExecutable(binary)).isTrue();
    assertThat(Files.exists(binary, LinkOption.NOFOLLOW_LINKS)).isTrue();
    Process process = new ProcessBuilder(binary.toString()).redirectErrorStream(true).start();
    String out = new String(process.getInputStream().readAllBytes(), StandardCharsets.UTF_8);
    assertThat(process.waitFor(10, TimeUnit.SECONDS)).isTrue();
    return out.trim();
  }
}
