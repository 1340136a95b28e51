"""Checks a floorplan SVG from mapping.test: well-formed XML, one panel for
the pipelined program's single group, and a labelled region per kernel."""
import sys
import xml.etree.ElementTree as ET

NS = "{http://www.w3.org/2000/svg}"
root = ET.parse(sys.argv[1]).getroot()
assert root.tag == NS + "svg", root.tag
texts = [t.text or "" for t in root.iter(NS + "text")]
panels = [t for t in texts if t.startswith("Pipeline group")]
assert panels == ["Pipeline group 0 (1 of 1): 3 kernels"], panels
titles = [t.text or "" for t in root.iter(NS + "title")]
regions = [t for t in titles if t.startswith("kernel ")]
assert len(set(regions)) == 3, regions
assert all("ONNX nodes: gemm" in r for r in regions), regions
assert any("mapping pipelined" in t for t in texts), texts[:3]
print("floorplan ok:", len(set(regions)), "regions")
