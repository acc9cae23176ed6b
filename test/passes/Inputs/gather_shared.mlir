// For tcc-gather-parameters.test: a sharded parameter read by two nodes.
func.func @train_step(%w: tensor<2xf32> {tcc.state = "shared.weight"}, %x: tensor<4xf32>) -> tensor<4xf32> {
  %g = tcc.all_gather %w {ranks = 2 : i64, tcc.gather_for = "forward"} : tensor<2xf32> -> tensor<4xf32>
  %a = tcc.add %x, %g : tensor<4xf32>, tensor<4xf32> loc("fc1")
  %b = tcc.add %a, %g : tensor<4xf32>, tensor<4xf32> loc("fc2")
  return %b : tensor<4xf32>
}
