// The managed fields view: clicking a marked line shows its owners (the
// same text as the line's hover title) in the status line above the YAML.
const details = document.getElementById("owner-details");
document.querySelector("pre.yaml")?.addEventListener("click", (e) => {
	const line = e.target.closest(".yl[data-owners]");
	if (!line || !details) return;
	const owners = line.title.split("\n");
	const shared = owners.length > 1 ? `shared by ${owners.length} managers: ` : "owned by ";
	const field = line.textContent.trim();
	details.textContent = `${field} — ${shared}${owners.join("; ")}`;
	document.querySelectorAll(".yl.selected").forEach((l) => l.classList.remove("selected"));
	line.classList.add("selected");
});
