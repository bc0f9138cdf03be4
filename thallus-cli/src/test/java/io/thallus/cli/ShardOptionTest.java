package io.thallus.cli;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import io.thallus.server.ShardDeclaration;
import org.junit.jupiter.api.Test;

class ShardOptionTest {
  @Test
  void nameEqualsPartColonPath() {
    assertThat(ShardOption.parse("lineitem=p0:lineitem/part0"))
        .isEqualTo(new ShardDeclaration("lineitem", "p0", "lineitem/part0"));
    assertThat(ShardOption.parse("t=p-1.a:dir/x:y.parquet").path()).isEqualTo("dir/x:y.parquet");
  }

  @Test
  void anythingElseIsRefusedNamingTheShape() {
    assertThatThrownBy(() -> ShardOption.parse("lineitem")).hasMessageContaining("NAME=PART:PATH");
    assertThatThrownBy(() -> ShardOption.parse("lineitem=p0")).hasMessageContaining("NAME=PART:PATH");
    assertThatThrownBy(() -> ShardOption.parse("=p0:x")).hasMessageContaining("NAME=PART:PATH");
    assertThatThrownBy(() -> ShardOption.parse("line item=p0:x")).hasMessageContaining("not a plain SQL identifier");
    assertThatThrownBy(() -> ShardOption.parse("t=p/0:x")).hasMessageContaining("part id 'p/0'");
    assertThatThrownBy(() -> ShardOption.parse("t=p0:")).hasMessageContaining("needs a path");
  }
}
