"""The scholarly catalog: papers, researchers, institutions, authorships and citations as rows, who is who
(identity, affiliations), and the profiles and lists read from them."""
