//===- ProgramEmitter.cpp - Write the program file ------------------------===//
//
// Tensors get ids in a fixed order: function arguments, then every value in
// program order (weights, each kernel's results and then the values inside
// its body). A transfer's result is the same tensor as its source, in
// another place, so it shares its id; its buffers say where it is.
//
//===----------------------------------------------------------------------===//
#include "loom/Target/ProgramEmitter.h"
#include "loom/Runtime/Program.h"
#include "loom/Runtime/ProgramSeal.h"
#include "loom/Target/ChipNetwork.h"

#include "loom/Dialect/Graph/IR/Graph.h"
#include "loom/Dialect/Sched/IR/Sched.h"
#include "loom/Dialect/Spatial/IR/Spatial.h"
#include "loom/Dialect/Spatial/Transforms/KernelCost.h"
#include "loom/Reference/Evaluator.h"
#include "loom/Runtime/Program_generated.h"

#include "mlir/Dialect/Func/IR/FuncOps.h"

#include <algorithm>
#include <functional>
#include <map>

using namespace mlir;
namespace fb = loom::program;

namespace loom {
namespace {

/// Why a program of `bytes` bytes (at least) is refused: past `limit`,
/// what a program file may hold (kMaxProgramBytes, FlatBuffers' 2 GiB).
std::string tooLarge(int64_t bytes, int64_t limit) {
  return "the program takes at least " + std::to_string(bytes) +
         " bytes, past the " + std::to_string(limit) +
         " a program file may hold (FlatBuffers' 2 GiB limit); Loom does "
         "not split a program's constants over several files";
}

class ProgramWriter {
public:
  /// `sizeHint` is the expected file size: the builder starts that large, so
  /// the weights are not copied again each time its buffer doubles.
  ProgramWriter(const TargetModel &target, const ProgramSource &source,
                size_t sizeHint)
      : target_(target), source_(source),
        fbb_(std::min<size_t>(sizeHint, size_t(source.maxBytes))) {}

  /// Builds the program and hands its bytes to `sink` (they live until
  /// the writer is destroyed).
  LogicalResult
  write(func::FuncOp func,
        const std::function<void(const uint8_t *, size_t)> &sink);

private:
  struct TensorInfo {
    Value value;
    fb::TensorKind kind = fb::TensorKind_Intermediate;
    std::string name;
    /// For constants: the attribute holding the data.
    ElementsAttr data;
    /// For parts of a model input or output: axis, index, count.
    std::array<int64_t, 3> part = {-1, 0, 1};
  };

  int32_t addTensor(Value v, fb::TensorKind kind, std::string name,
                    ElementsAttr data = {});
  int32_t idOf(Value v) const;
  LogicalResult collectKernel(spatial::KernelOp kernel);
  flatbuffers::Offset<fb::Tensor> buildTensor(const TensorInfo &t,
                                              std::string &error);
  flatbuffers::Offset<fb::Op> buildOp(Operation *op);
  flatbuffers::Offset<fb::Kernel> buildKernel(spatial::KernelOp kernel);

  /// The scheduled function's kernels, instructions, buffers and summary.
  struct Scheduled {
    std::vector<spatial::KernelOp> kernels;
    sched::SummaryOp summary;
    std::vector<sched::InstrOp> instrs;
    std::vector<sched::BufferOp> buffers;
  };
  /// Names the tensors (inputs, weights, kernel results; outputs by
  /// `outNames`) and collects the ops to write into `s`.
  LogicalResult collect(func::FuncOp func,
                        const std::vector<std::string> &outNames,
                        Scheduled &s);
  /// The instructions in start order, built.
  std::vector<flatbuffers::Offset<fb::Instr>>
  buildInstrs(std::vector<sched::InstrOp> &instrs);
  /// The buffers in id order, built.
  std::vector<flatbuffers::Offset<fb::Buffer>>
  buildBuffers(std::vector<sched::BufferOp> &buffers);
  /// The mesh links of each of `chips` chips, then the chip links; sets
  /// `topology` to the chip network's name.
  std::vector<flatbuffers::Offset<fb::Link>>
  buildLinks(func::FuncOp func, int64_t chips,
             flatbuffers::Offset<flatbuffers::String> &topology);

  const TargetModel &target_;
  const ProgramSource &source_;
  flatbuffers::FlatBufferBuilder fbb_;
  std::vector<TensorInfo> tensors_;
  llvm::DenseMap<Value, int32_t> ids_;
  std::map<std::string, std::string> resultNames_;
};

int32_t ProgramWriter::addTensor(Value v, fb::TensorKind kind, std::string name,
                                 ElementsAttr data) {
  int32_t id = static_cast<int32_t>(tensors_.size());
  tensors_.push_back({v, kind, std::move(name), data});
  ids_[v] = id;
  return id;
}

int32_t ProgramWriter::idOf(Value v) const {
  if (auto t = v.getDefiningOp<spatial::TransferOp>())
    return idOf(t.getSource());
  auto it = ids_.find(v);
  return it == ids_.end() ? -1 : it->second;
}

/// The name of a value made by `op`: its ONNX node, with the result number
/// when it has several.
std::string valueName(Operation *op, unsigned resultNumber) {
  std::string name = spatial::onnxNodeName(op->getLoc());
  if (op->getNumResults() > 1)
    name += ":" + std::to_string(resultNumber);
  return name;
}

LogicalResult ProgramWriter::collectKernel(spatial::KernelOp kernel) {
  Block &body = kernel.getBody().front();
  for (auto [arg, in] : llvm::zip(body.getArguments(), kernel.getInputs()))
    ids_[arg] = idOf(in);
  // Values the body yields are the kernel's results.
  Operation *yield = body.getTerminator();
  for (auto [v, r] : llvm::zip(yield->getOperands(), kernel.getResults()))
    if (!ids_.count(v) && v.getDefiningOp())
      ids_[v] = ids_[r];
  for (Operation &op : body.without_terminator()) {
    if (auto c = dyn_cast<graph::ConstantOp>(op)) {
      addTensor(c, fb::TensorKind_Constant, valueName(&op, 0), c.getValue());
      continue;
    }
    for (OpResult r : op.getResults())
      if (!ids_.count(r))
        addTensor(r, fb::TensorKind_Intermediate,
                  valueName(&op, r.getResultNumber()));
  }
  return success();
}

flatbuffers::Offset<fb::Tensor> ProgramWriter::buildTensor(const TensorInfo &t,
                                                           std::string &error) {
  auto type = cast<RankedTensorType>(t.value.getType());
  std::optional<rt::DType> dt = dtypeFromType(type.getElementType());
  auto name = fbb_.CreateString(t.name);
  // A model input or a kernel's result held narrow (a KV cache at fp8).
  flatbuffers::Offset<flatbuffers::String> storage = 0;
  if (t.kind != fb::TensorKind_Constant && type.getElementType().isF32())
    if (std::optional<rt::NumericFormat> f = spatial::storageFormatOf(t.value))
      storage = fbb_.CreateString(rt::numericFormatName(*f));
  auto shape = fbb_.CreateVector(
      std::vector<int64_t>(type.getShape().begin(), type.getShape().end()));
  flatbuffers::Offset<flatbuffers::Vector<uint8_t>> data = 0;
  bool withData = t.data && source_.constantData;
  // A splat is written as its one element (weightless models stay small).
  auto dense = dyn_cast_or_null<DenseElementsAttr>(t.data);
  bool splat = withData && dense && dense.isSplat() &&
               type.getNumElements() > 1;
  if (withData) {
    ElementsAttr attr = t.data;
    if (splat)
      attr = DenseElementsAttr::get(
          RankedTensorType::get({}, type.getElementType()),
          dense.getSplatValue<Attribute>());
    std::optional<rt::Tensor> host = tryTensorFromAttr(attr, error);
    if (!host)
      return 0;
    // The file so far, this constant, its length and its alignment (at
    // most 4 + 15 bytes) must stay within what a program file holds
    // (FlatBuffers only asserts it).
    if (int64_t(fbb_.GetSize()) + int64_t(host->byteSize()) + 32 >
        source_.maxBytes) {
      error = tooLarge(int64_t(fbb_.GetSize()) + int64_t(host->byteSize()),
                       source_.maxBytes);
      return 0;
    }
    fbb_.ForceVectorAlignment(host->byteSize(), 1, 16);
    data = fbb_.CreateVector(static_cast<const uint8_t *>(host->raw()),
                             host->byteSize());
  }
  fb::TensorBuilder tb(fbb_);
  tb.add_id(ids_.lookup(t.value));
  tb.add_name(name);
  tb.add_dtype(static_cast<fb::DType>(dt ? static_cast<int>(*dt) : 0));
  tb.add_shape(shape);
  tb.add_kind(t.kind);
  if (withData)
    tb.add_data(data);
  if (splat)
    tb.add_splat(true);
  if (!storage.IsNull())
    tb.add_storage(storage);
  if (t.part[2] > 1) {
    tb.add_part_axis(static_cast<int32_t>(t.part[0]));
    tb.add_part_index(static_cast<int32_t>(t.part[1]));
    tb.add_part_count(static_cast<int32_t>(t.part[2]));
  }
  return tb.Finish();
}

flatbuffers::Offset<fb::Op> ProgramWriter::buildOp(Operation *op) {
  StringRef opName = op->getName().getStringRef();
  opName.consume_front("graph.");
  std::vector<int32_t> inputs, outputs;
  auto segments = op->getAttrOfType<DenseI32ArrayAttr>("operandSegmentSizes");
  if (segments) {
    unsigned at = 0;
    for (int32_t n : segments.asArrayRef()) {
      if (n == 0)
        inputs.push_back(-1);
      for (int32_t i = 0; i < n; ++i)
        inputs.push_back(idOf(op->getOperand(at++)));
    }
  } else {
    for (Value v : op->getOperands())
      inputs.push_back(idOf(v));
  }
  for (Value v : op->getResults())
    outputs.push_back(idOf(v));

  // The same attribute view the golden reference executes (attrsOf), so
  // the simulator and the reference see identical parameters.
  std::vector<flatbuffers::Offset<fb::Attr>> attrs;
  for (const auto &[name, value] : attrsOf(op)) {
    using K = rt::AttrValue::Kind;
    fb::AttrKind kind = value.kind == K::Bool     ? fb::AttrKind_Bool
                        : value.kind == K::Int    ? fb::AttrKind_Int
                        : value.kind == K::Ints   ? fb::AttrKind_Ints
                        : value.kind == K::Float  ? fb::AttrKind_Float
                        : value.kind == K::Floats ? fb::AttrKind_Floats
                                                  : fb::AttrKind_String;
    auto nameOff = fbb_.CreateString(name);
    auto intsOff = value.ints.empty() ? 0 : fbb_.CreateVector(value.ints);
    auto floatsOff =
        value.floats.empty() ? 0 : fbb_.CreateVector(value.floats);
    auto strOff =
        kind == fb::AttrKind_String ? fbb_.CreateString(value.str) : 0;
    fb::AttrBuilder ab(fbb_);
    ab.add_name(nameOff);
    ab.add_kind(kind);
    if (!value.ints.empty())
      ab.add_ints(intsOff);
    if (!value.floats.empty())
      ab.add_floats(floatsOff);
    if (kind == fb::AttrKind_String)
      ab.add_str(strOff);
    attrs.push_back(ab.Finish());
  }
  return fb::CreateOp(fbb_, fbb_.CreateString(opName.str()),
                      fbb_.CreateVector(inputs), fbb_.CreateVector(outputs),
                      fbb_.CreateVector(attrs),
                      fbb_.CreateString(spatial::onnxNodeName(op->getLoc())));
}

flatbuffers::Offset<fb::Kernel>
ProgramWriter::buildKernel(spatial::KernelOp kernel) {
  std::vector<flatbuffers::Offset<fb::Op>> ops;
  std::vector<std::string> nodes;
  for (Operation &op : kernel.getBody().front().without_terminator()) {
    if (isa<graph::ConstantOp>(op))
      continue;
    ops.push_back(buildOp(&op));
    std::string node = spatial::onnxNodeName(op.getLoc());
    if (!node.empty() &&
        std::find(nodes.begin(), nodes.end(), node) == nodes.end())
      nodes.push_back(node);
  }
  std::vector<int32_t> inputs, outputs;
  for (Value v : kernel.getInputs())
    inputs.push_back(idOf(v));
  for (Value v : kernel.getResults())
    outputs.push_back(idOf(v));
  ArrayRef<int64_t> region = kernel.getRegion();
  return fb::CreateKernel(
      fbb_, kernel.getId(), fbb_.CreateString(kernel.getKernelName().str()),
      fbb_.CreateVectorOfStrings(nodes),
      static_cast<fb::KernelKind>(kernel.getKind()),
      static_cast<fb::NumericFormat>(kernel.getPrecision()), region[0],
      region[1], region[2], region[3], fbb_.CreateVector(ops),
      fbb_.CreateVector(inputs), fbb_.CreateVector(outputs), kernel.getFlops(),
      kernel.getBytes(), static_cast<fb::CostBound>(kernel.getBound()),
      kernel.getCycles(), static_cast<int32_t>(kernel.getGroup()),
      static_cast<int32_t>(kernel.getChip()),
      fbb_.CreateString(kernel.getDecomposition().value_or("").str()));
}

fb::Unit unitOf(StringRef unit) {
  if (unit == "matrix")
    return fb::Unit_Matrix;
  if (unit == "vector")
    return fb::Unit_Vector;
  if (unit == "dma")
    return fb::Unit_Dma;
  if (unit == "chip_link")
    return fb::Unit_ChipLink;
  return fb::Unit_MeshLink;
}

LogicalResult ProgramWriter::collect(func::FuncOp func,
                                     const std::vector<std::string> &outNames,
                                     Scheduled &s) {
  Block &entry = func.getBody().front();
  auto ret = cast<func::ReturnOp>(entry.getTerminator());
  auto outputName = [&](Value v) -> std::string {
    for (unsigned i = 0; i < ret.getNumOperands(); ++i)
      if (ret.getOperand(i) == v)
        return outNames[i].empty() ? "output" + std::to_string(i) : outNames[i];
    return "";
  };

  auto partOf = [](DenseI64ArrayAttr a) -> std::array<int64_t, 3> {
    if (!a || a.size() != 3)
      return {-1, 0, 1};
    return {a[0], a[1], a[2]};
  };
  for (BlockArgument arg : func.getArguments()) {
    auto n =
        func.getArgAttrOfType<StringAttr>(arg.getArgNumber(), "graph.name");
    addTensor(arg, fb::TensorKind_Input,
              n ? n.str() : "input" + std::to_string(arg.getArgNumber()));
    tensors_.back().part = partOf(func.getArgAttrOfType<DenseI64ArrayAttr>(
        arg.getArgNumber(), graph::kPartAttr));
  }
  std::map<void *, std::array<int64_t, 3>> outParts;
  for (unsigned i = 0; i < ret.getNumOperands(); ++i)
    outParts[ret.getOperand(i).getAsOpaquePointer()] =
        partOf(func.getResultAttrOfType<DenseI64ArrayAttr>(i, graph::kPartAttr));
  for (Operation &op : entry) {
    if (auto w = dyn_cast<spatial::WeightOp>(op)) {
      std::string out = outputName(w);
      addTensor(w, fb::TensorKind_Constant,
                out.empty() ? valueName(&op, 0) : out, w.getValue());
    } else if (auto k = dyn_cast<spatial::KernelOp>(op)) {
      for (OpResult r : k.getResults()) {
        std::string out = outputName(r);
        addTensor(r,
                  out.empty() ? fb::TensorKind_Intermediate
                              : fb::TensorKind_Output,
                  out.empty() ? valueName(&op, r.getResultNumber()) : out);
        if (auto part = outParts.find(r.getAsOpaquePointer());
            part != outParts.end())
          tensors_.back().part = part->second;
      }
      if (failed(collectKernel(k)))
        return failure();
      s.kernels.push_back(k);
    } else if (auto i = dyn_cast<sched::InstrOp>(op)) {
      s.instrs.push_back(i);
    } else if (auto b = dyn_cast<sched::BufferOp>(op)) {
      s.buffers.push_back(b);
    } else if (auto sum = dyn_cast<sched::SummaryOp>(op)) {
      s.summary = sum;
    } else if (!isa<spatial::TransferOp, func::ReturnOp>(op)) {
      return op.emitError() << "emit-program: unexpected '" << op.getName()
                            << "' in a scheduled function";
    }
  }
  if (!s.summary)
    return func.emitError()
           << "emit-program: the function has no schedule (run "
              "spatial-to-sched first)";
  return success();
}

std::vector<flatbuffers::Offset<fb::Instr>>
ProgramWriter::buildInstrs(std::vector<sched::InstrOp> &instrs) {
  std::stable_sort(instrs.begin(), instrs.end(),
                   [](sched::InstrOp a, sched::InstrOp b) {
                     return std::make_pair(a.getStart(), a.getId()) <
                            std::make_pair(b.getStart(), b.getId());
                   });
  std::vector<flatbuffers::Offset<fb::Instr>> instrOffsets;
  for (sched::InstrOp i : instrs) {
    auto vec = [&](ArrayRef<int64_t> v) {
      return fbb_.CreateVector(std::vector<int32_t>(v.begin(), v.end()));
    };
    instrOffsets.push_back(fb::CreateInstr(
        fbb_, i.getId(), i.getKernel(), unitOf(i.getUnit()), i.getResource(),
        i.getStart(), i.getDuration(), vec(i.getDeps()), vec(i.getReads()),
        vec(i.getWrites()), i.getBytes(), i.getLatency().value_or(0)));
  }
  return instrOffsets;
}

std::vector<flatbuffers::Offset<fb::Buffer>>
ProgramWriter::buildBuffers(std::vector<sched::BufferOp> &buffers) {
  std::stable_sort(buffers.begin(), buffers.end(),
                   [](sched::BufferOp a, sched::BufferOp b) {
                     return a.getId() < b.getId();
                   });
  std::vector<flatbuffers::Offset<fb::Buffer>> bufferOffsets;
  for (sched::BufferOp b : buffers) {
    flatbuffers::Offset<flatbuffers::Vector<int64_t>> lo = 0, hi = 0;
    if (std::optional<ArrayRef<int64_t>> box = b.getBox()) {
      size_t rank = box->size() / 2;
      lo = fbb_.CreateVector(box->take_front(rank).vec());
      hi = fbb_.CreateVector(box->drop_front(rank).vec());
    }
    bufferOffsets.push_back(fb::CreateBuffer(
        fbb_, b.getId(), idOf(b.getValue()), b.getTile(), b.getOffset(),
        b.getSize(), b.getLiveStart(), b.getLiveEnd(),
        static_cast<int32_t>(b.getCopies()), b.getResident(), lo, hi));
  }
  return bufferOffsets;
}

std::vector<flatbuffers::Offset<fb::Link>>
ProgramWriter::buildLinks(func::FuncOp func, int64_t chips,
                          flatbuffers::Offset<flatbuffers::String> &topology) {
  // Links, numbered as spatial-to-sched books them: each chip's mesh
  // links, then the chip links.
  spatial::Mesh mesh(target_.tileRows(), target_.tileCols());
  const int64_t tilesPerChip = target_.tilesPerChip();
  std::vector<flatbuffers::Offset<fb::Link>> linkOffsets;
  for (int64_t c = 0; c < chips; ++c)
    for (int64_t l = 0; l < mesh.numLinks(); ++l)
      linkOffsets.push_back(fb::CreateLink(
          fbb_, static_cast<int32_t>(c * mesh.numLinks() + l),
          static_cast<int32_t>(c * tilesPerChip + mesh.linkEnds(l).first),
          static_cast<int32_t>(c * tilesPerChip + mesh.linkEnds(l).second),
          false, static_cast<int32_t>(c), static_cast<int32_t>(c)));
  ChipNetwork net(target_, chips, spatial::systemChipsOf(func),
                  spatial::tensorParallelOf(func));
  if (chips > 1)
    for (int64_t k = 0; k < net.numLinks(); ++k) {
      const ChipNetwork::Link &l = net.link(k);
      linkOffsets.push_back(fb::CreateLink(
          fbb_, static_cast<int32_t>(chips * mesh.numLinks() + k),
          static_cast<int32_t>(l.from * tilesPerChip),
          static_cast<int32_t>(l.to * tilesPerChip), true,
          static_cast<int32_t>(l.from), static_cast<int32_t>(l.to),
          l.bytesPerCycle, l.latencyCycles, l.adaptiveBytesPerCycle));
    }
  topology = fbb_.CreateString(net.topologyName());
  return linkOffsets;
}

LogicalResult ProgramWriter::write(
    func::FuncOp func,
    const std::function<void(const uint8_t *, size_t)> &sink) {
  Block &entry = func.getBody().front();
  auto ret = cast<func::ReturnOp>(entry.getTerminator());
  // Output names come from the function's result attributes.
  std::vector<std::string> outNames(ret.getNumOperands());
  for (unsigned i = 0; i < ret.getNumOperands(); ++i)
    if (auto n = func.getResultAttrOfType<StringAttr>(i, "graph.name"))
      outNames[i] = n.str();
  Scheduled scheduled;
  if (failed(collect(func, outNames, scheduled)))
    return failure();
  sched::SummaryOp summary = scheduled.summary;

  std::vector<flatbuffers::Offset<fb::Tensor>> tensorOffsets;
  for (const TensorInfo &t : tensors_) {
    std::string error;
    auto off = buildTensor(t, error);
    if (!error.empty()) {
      Operation *at = t.value.getDefiningOp();
      return (at ? at->emitError() : func.emitError())
             << "emit-program: constant"
             << (t.name.empty() ? std::string() : " '" + t.name + "'")
             << ": " << error;
    }
    tensorOffsets.push_back(off);
  }
  std::vector<int32_t> inputs, outputs;
  for (BlockArgument arg : func.getArguments())
    inputs.push_back(idOf(arg));
  for (Value v : ret.getOperands())
    outputs.push_back(idOf(v));
  std::vector<flatbuffers::Offset<fb::Kernel>> kernelOffsets;
  for (spatial::KernelOp k : scheduled.kernels)
    kernelOffsets.push_back(buildKernel(k));

  std::vector<flatbuffers::Offset<fb::Instr>> instrOffsets =
      buildInstrs(scheduled.instrs);
  std::vector<flatbuffers::Offset<fb::Buffer>> bufferOffsets =
      buildBuffers(scheduled.buffers);
  int64_t chips = 1, tp = 1, pp = 1;
  if (auto a = func->getAttrOfType<IntegerAttr>(spatial::kChipsAttr))
    chips = std::max<int64_t>(1, a.getInt());
  if (auto a = func->getAttrOfType<IntegerAttr>(spatial::kTensorParallelAttr))
    tp = a.getInt();
  if (auto a = func->getAttrOfType<IntegerAttr>(spatial::kPipelineParallelAttr))
    pp = a.getInt();
  flatbuffers::Offset<flatbuffers::String> topology;
  std::vector<flatbuffers::Offset<fb::Link>> linkOffsets =
      buildLinks(func, chips, topology);

  auto model = fbb_.CreateString(source_.model);
  auto targetName = fbb_.CreateString(target_.name());
  auto targetJson = fbb_.CreateString(source_.targetJson);
  auto tensorsVec = fbb_.CreateVector(tensorOffsets);
  auto inputsVec = fbb_.CreateVector(inputs);
  auto outputsVec = fbb_.CreateVector(outputs);
  auto kernelsVec = fbb_.CreateVector(kernelOffsets);
  auto instrsVec = fbb_.CreateVector(instrOffsets);
  auto buffersVec = fbb_.CreateVector(bufferOffsets);
  auto linksVec = fbb_.CreateVector(linkOffsets);
  auto mapping = fbb_.CreateString(summary.getMapping().str());
  std::vector<std::string> positionNames;
  for (unsigned i = 0; i < ret.getNumOperands(); ++i)
    positionNames.push_back(outNames[i].empty() ? "output" + std::to_string(i)
                                                : outNames[i]);
  auto outputNamesVec = fbb_.CreateVectorOfStrings(positionNames);
  fb::ProgramBuilder pb(fbb_);
  pb.add_version(rt::kProgramVersion);
  pb.add_model(model);
  pb.add_target_name(targetName);
  pb.add_target_json(targetJson);
  pb.add_tile_rows(static_cast<int32_t>(target_.tileRows()));
  pb.add_tile_cols(static_cast<int32_t>(target_.tileCols()));
  pb.add_sram_bytes_per_tile(target_.sramBytesPerTile());
  pb.add_clock_hz(target_.clockHz());
  pb.add_tensors(tensorsVec);
  pb.add_inputs(inputsVec);
  pb.add_outputs(outputsVec);
  pb.add_kernels(kernelsVec);
  pb.add_instrs(instrsVec);
  pb.add_buffers(buffersVec);
  pb.add_links(linksVec);
  pb.add_total_cycles(summary.getTotalCycles());
  pb.add_sram_peak_bytes(summary.getSramPeakBytes());
  pb.add_sram_lower_bound_bytes(summary.getSramLowerBoundBytes());
  pb.add_roofline_cycles(summary.getRooflineCycles());
  pb.add_mapping(mapping);
  pb.add_pipeline_groups(static_cast<int32_t>(summary.getPipelineGroups()));
  pb.add_chips(static_cast<int32_t>(chips));
  pb.add_tensor_parallel(static_cast<int32_t>(tp));
  pb.add_pipeline_parallel(static_cast<int32_t>(pp));
  pb.add_topology(topology);
  pb.add_output_names(outputNamesVec);
  pb.add_initiation_interval(summary.getInitiationInterval()
                                 ? summary.getInitiationInterval()
                                 : summary.getTotalCycles());
  // Placeholders (a default value would not be stored), sealed below.
  pb.add_file_size(1);
  pb.add_checksum(1);
  fb::FinishProgramBuffer(fbb_, pb.Finish());
  if (int64_t(fbb_.GetSize()) > source_.maxBytes)
    return func.emitError() << "emit-program: "
                            << tooLarge(int64_t(fbb_.GetSize()),
                                        source_.maxBytes);
  if (!rt::sealProgram(fbb_.GetBufferPointer(), fbb_.GetSize()))
    return func.emitError() << "emit-program: the program buffer lost its "
                               "integrity fields";
  sink(fbb_.GetBufferPointer(), fbb_.GetSize());
  return success();
}

} // namespace

/// The function to emit, or null after reporting why there is none.
static func::FuncOp programFunction(ModuleOp module) {
  func::FuncOp func;
  for (auto f : module.getOps<func::FuncOp>()) {
    if (func) {
      module.emitError()
          << "emit-program: expected one function, found several";
      return {};
    }
    func = f;
  }
  if (!func || func.isExternal()) {
    module.emitError() << "emit-program: no function to emit";
    return {};
  }
  return func;
}

/// The bytes of every constant in `module` plus 1 MiB for the rest: about
/// the size of the program file.
static size_t expectedProgramSize(ModuleOp module) {
  size_t bytes = 1 << 20;
  module.walk([&](Operation *op) {
    for (NamedAttribute a : op->getAttrs())
      if (auto e = dyn_cast<ElementsAttr>(a.getValue()))
        if (auto t = dyn_cast<RankedTensorType>(e.getType());
            t && !(isa<DenseElementsAttr>(e) &&
                   cast<DenseElementsAttr>(e).isSplat()))
          if (auto dt = dtypeFromType(t.getElementType()))
            bytes += static_cast<size_t>(t.getNumElements()) * rt::dtypeSize(*dt);
  });
  return bytes;
}

LogicalResult emitProgram(ModuleOp module, const TargetModel &target,
                          std::vector<uint8_t> &bytes,
                          const ProgramSource &source) {
  func::FuncOp func = programFunction(module);
  if (!func)
    return failure();
  ProgramWriter writer(target, source, expectedProgramSize(module));
  return writer.write(func, [&](const uint8_t *data, size_t size) {
    bytes.assign(data, data + size);
  });
}

LogicalResult emitProgram(ModuleOp module, const TargetModel &target,
                          llvm::raw_ostream &os, const ProgramSource &source) {
  // Written straight from the builder: no second copy of the weights.
  func::FuncOp func = programFunction(module);
  if (!func)
    return failure();
  ProgramWriter writer(target, source, expectedProgramSize(module));
  return writer.write(func, [&](const uint8_t *data, size_t size) {
    os.write(reinterpret_cast<const char *>(data), size);
  });
}

} // namespace loom
