# The runtime's GoogleTest units, included by runtime/CMakeLists.txt (so the
# runtime configured alone builds and runs them): nothing here links MLIR.
set(LOOM_UNITTESTS ${LOOM_ROOT}/test/unittests)

# Reference kernels, .npy/.pb I/O, formats, the tile executor, the ISA.
file(GLOB LOOM_REF_TESTS CONFIGURE_DEPENDS ${LOOM_UNITTESTS}/Reference*Test.cpp)
add_executable(loom-runtime-tests ${LOOM_REF_TESTS}
  ${LOOM_UNITTESTS}/TensorIOTest.cpp ${LOOM_UNITTESTS}/Fp8Test.cpp
  ${LOOM_UNITTESTS}/Int8Test.cpp ${LOOM_UNITTESTS}/TileExecutorTest.cpp
  ${LOOM_UNITTESTS}/IsaTest.cpp ${LOOM_UNITTESTS}/ProgressTest.cpp
  ${LOOM_UNITTESTS}/CompareTest.cpp)
target_compile_options(loom-runtime-tests PRIVATE -fexceptions)
target_link_libraries(loom-runtime-tests PRIVATE LoomRuntime GTest::gtest GTest::gtest_main)
gtest_discover_tests(loom-runtime-tests DISCOVERY_MODE PRE_TEST)

# Target descriptions, the cost model, the chip network.
add_executable(loom-target-tests ${LOOM_UNITTESTS}/TargetModelTest.cpp
  ${LOOM_UNITTESTS}/CostModelTest.cpp ${LOOM_UNITTESTS}/ChipNetworkTest.cpp)
target_compile_options(loom-target-tests PRIVATE -fexceptions)
target_link_libraries(loom-target-tests PRIVATE LoomTarget GTest::gtest GTest::gtest_main)
gtest_discover_tests(loom-target-tests DISCOVERY_MODE PRE_TEST)

# The simulator: program loading and checks, fast kernels, schedule replay.
add_executable(loom-simulator-tests ${LOOM_UNITTESTS}/SimulatorTest.cpp
  ${LOOM_UNITTESTS}/FloorplanTest.cpp ${LOOM_UNITTESTS}/ScheduleVerifierTest.cpp)
target_compile_options(loom-simulator-tests PRIVATE -fexceptions)
target_link_libraries(loom-simulator-tests PRIVATE LoomRuntime nlohmann_json::nlohmann_json
  GTest::gtest GTest::gtest_main)
add_dependencies(loom-simulator-tests LoomProgramSchema)
gtest_discover_tests(loom-simulator-tests DISCOVERY_MODE PRE_TEST)
