package io.thallus.internal.server;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import io.thallus.StatusCode;
import io.thallus.ThallusException;
import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

class DataRootTest {
  @TempDir
  Path temp;

  private DataRoot root() throws IOException {
    Path data = Files.createDirectories(temp.resolve("data"));
    Files.createDirectories(data.resolve("sub"));
    Files.writeString(data.resolve("sub/a.csv"), "x\n1\n");
    Files.writeString(temp.resolve("secret.csv"), "x\n1\n");
    Files.createSymbolicLink(data.resolve("escape.csv"), temp.resolve("secret.csv"));
    Files.createSymbolicLink(data.resolve("outside"), temp);
    return new DataRoot(data);
  }

  @Test
  void resolvesFilesAndGlobsInsideTheRoot() throws IOException {
    DataRoot root = root();
    assertThat(root.resolve("sub/a.csv")).isEqualTo(root.path().resolve("sub/a.csv"));
    assertThat(root.resolve("./sub/../sub/a.csv")).isEqualTo(root.path().resolve("sub/a.csv"));
    assertThat(root.resolve("sub/*.csv")).isEqualTo(root.path().resolve("sub/*.csv"));
  }

  @Test
  void refusesEveryWayOut() throws IOException {
    DataRoot root = root();
    assertRefused(() -> root.resolve("../secret.csv"), StatusCode.PERMISSION_DENIED, "outside the data root");
    assertRefused(() -> root.resolve(temp.resolve("secret.csv").toString()), StatusCode.PERMISSION_DENIED,
        "absolute path");
    assertRefused(() -> root.resolve("escape.csv"), StatusCode.PERMISSION_DENIED, "symbolic link");
    assertRefused(() -> root.resolve("outside/secret.csv"), StatusCode.PERMISSION_DENIED, "symbolic link");
    assertRefused(() -> root.resolve("outside/*.csv"), StatusCode.PERMISSION_DENIED, "symbolic link");
    assertRefused(() -> root.resolve("sub/missing.parquet"), StatusCode.NOT_FOUND, "does not exist");
  }

  private static void assertRefused(Runnable call, StatusCode code, String message) {
    assertThatThrownBy(call::run).isInstanceOfSatisfying(ThallusException.class, e -> {
      assertThat(e.code()).isEqualTo(code);
      assertThat(e.getMessage()).contains(message);
    });
  }
}
