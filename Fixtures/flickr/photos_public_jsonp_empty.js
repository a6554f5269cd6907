({
	"title": "Uploads from everyone",
	"link": "https:\/\/www.flickr.com\/photos\/",
	"description": "",
	"modified": "2025-11-03T14:20:05Z",
	"generator": "https:\/\/www.flickr.com",
	"items": [
		{
			"title": "Sunset over the Golden Gate",
			"link": "https:\/\/www.flickr.com\/photos\/12345678@N00\/53301234567\/",
			"media": {
				"m": "https:\/\/live.staticflickr.com\/65535\/53301234567_a1b2c3d4e5_m.jpg"
			},
			"date_taken": "2025-11-03T06:12:33-08:00",
			"description": " <p><a href=\"https:\/\/www.flickr.com\/people\/12345678@N00\/\">Jane Doe<\/a> posted a photo:<\/p> <p><a href=\"https:\/\/www.flickr.com\/photos\/12345678@N00\/53301234567\/\" title=\"Sunset over the Golden Gate\"><img src=\"https:\/\/live.staticflickr.com\/65535\/53301234567_a1b2c3d4e5_m.jpg\" width=\"240\" height=\"160\" alt=\"Sunset over the Golden Gate\" \/><\/a><\/p> ",
			"published": "2025-11-03T14:20:05Z",
			"author": "nobody@flickr.com (\"Jane Doe\")",
			"author_id": "12345678@N00",
			"tags": "sunset goldengate sanfrancisco"
		},
		{
			"title": "Bob\'s \"best\" shot \\ o\'clock",
			"link": "https:\/\/www.flickr.com\/photos\/98765432@N05\/53301230000\/",
			"media": {
				"m": "https:\/\/live.staticflickr.com\/65535\/53301230000_ffeeddccbb_m.jpg"
			},
			"date_taken": "2025-11-03T23:59:59+09:00",
			"description": " <p>Café “Zürich” — 東京<\/p> ",
			"published": "2025-11-03T14:19:58Z",
			"author": "nobody@flickr.com (Old Style Name)",
			"author_id": "98765432@N05",
			"tags": ""
		},
		{
			"title": "",
			"link": "https:\/\/www.flickr.com\/photos\/55555555@N01\/53301229999\/",
			"media": {
				"m": "https:\/\/live.staticflickr.com\/65535\/53301229999_0011223344_m.jpg"
			},
			"date_taken": "2025-11-02T10:00:00-00:00",
			"description": "",
			"published": "2025-11-03T14:19:40Z",
			"author": "nobody@flickr.com (\"Ünïcødé 😀\")",
			"author_id": "55555555@N01",
			"tags": "cat kitten"
		},
		{
			"title": "Photo 3",
			"link": "https:\/\/www.flickr.com\/photos\/11111111@N03\/53301200003\/",
			"media": {
				"m": "https:\/\/live.staticflickr.com\/65535\/53301200003_abcdef0003_m.jpg"
			},
			"date_taken": "2025-11-03T03:00:00-05:00",
			"description": " <p>photo 3<\/p> ",
			"published": "2025-11-03T14:56:00Z",
			"author": "nobody@flickr.com (\"User 3\")",
			"author_id": "11111111@N03",
			"tags": "cat"
		},
		{
			"title": "Photo 4",
			"link": "https:\/\/www.flickr.com\/photos\/11111111@N04\/53301200004\/",
			"media": {
				"m": "https:\/\/live.staticflickr.com\/65535\/53301200004_abcdef0004_m.jpg"
			},
			"date_taken": "2025-11-03T04:00:00-05:00",
			"description": " <p>photo 4<\/p> ",
			"published": "2025-11-03T14:55:00Z",
			"author": "nobody@flickr.com (\"User 4\")",
			"author_id": "11111111@N04",
			"tags": "dog park"
		},
		{
			"title": "Photo 5",
			"link": "https:\/\/www.flickr.com\/photos\/11111111@N05\/53301200005\/",
			"media": {
				"m": "https:\/\/live.staticflickr.com\/65535\/53301200005_abcdef0005_m.jpg"
			},
			"date_taken": "2025-11-03T05:00:00-05:00",
			"description": " <p>photo 5<\/p> ",
			"published": "2025-11-03T14:54:00Z",
			"author": "nobody@flickr.com (\"User 5\")",
			"author_id": "11111111@N05",
			"tags": "dog park"
		},
		{
			"title": "Photo 6",
			"link": "https:\/\/www.flickr.com\/photos\/11111111@N06\/53301200006\/",
			"media": {
				"m": "https:\/\/live.staticflickr.com\/65535\/53301200006_abcdef0006_m.jpg"
			},
			"date_taken": "2025-11-03T06:00:00-05:00",
			"description": " <p>photo 6<\/p> ",
			"published": "2025-11-03T14:53:00Z",
			"author": "nobody@flickr.com (\"User 6\")",
			"author_id": "11111111@N06",
			"tags": "cat"
		},
		{
			"title": "Photo 7",
			"link": "https:\/\/www.flickr.com\/photos\/11111111@N07\/53301200007\/",
			"media": {
				"m": "https:\/\/live.staticflickr.com\/65535\/53301200007_abcdef0007_m.jpg"
			},
			"date_taken": "2025-11-03T07:00:00-05:00",
			"description": " <p>photo 7<\/p> ",
			"published": "2025-11-03T14:52:00Z",
			"author": "nobody@flickr.com (\"User 7\")",
			"author_id": "11111111@N07",
			"tags": "dog park"
		},
		{
			"title": "Photo 8",
			"link": "https:\/\/www.flickr.com\/photos\/11111111@N08\/53301200008\/",
			"media": {
				"m": "https:\/\/live.staticflickr.com\/65535\/53301200008_abcdef0008_m.jpg"
			},
			"date_taken": "2025-11-03T08:00:00-05:00",
			"description": " <p>photo 8<\/p> ",
			"published": "2025-11-03T14:51:00Z",
			"author": "nobody@flickr.com (\"User 8\")",
			"author_id": "11111111@N08",
			"tags": "dog park"
		},
		{
			"title": "Photo 9",
			"link": "https:\/\/www.flickr.com\/photos\/11111111@N09\/53301200009\/",
			"media": {
				"m": "https:\/\/live.staticflickr.com\/65535\/53301200009_abcdef0009_m.jpg"
			},
			"date_taken": "2025-11-03T09:00:00-05:00",
			"description": " <p>photo 9<\/p> ",
			"published": "2025-11-03T14:50:00Z",
			"author": "nobody@flickr.com (\"User 9\")",
			"author_id": "11111111@N09",
			"tags": "cat"
		},
		{
			"title": "Photo 10",
			"link": "https:\/\/www.flickr.com\/photos\/11111111@N00\/53301200010\/",
			"media": {
				"m": "https:\/\/live.staticflickr.com\/65535\/53301200010_abcdef0010_m.jpg"
			},
			"date_taken": "2025-11-03T10:00:00-05:00",
			"description": " <p>photo 10<\/p> ",
			"published": "2025-11-03T14:49:00Z",
			"author": "nobody@flickr.com (\"User 10\")",
			"author_id": "11111111@N00",
			"tags": "dog park"
		},
		{
			"title": "Photo 11",
			"link": "https:\/\/www.flickr.com\/photos\/11111111@N01\/53301200011\/",
			"media": {
				"m": "https:\/\/live.staticflickr.com\/65535\/53301200011_abcdef0011_m.jpg"
			},
			"date_taken": "2025-11-03T11:00:00-05:00",
			"description": " <p>photo 11<\/p> ",
			"published": "2025-11-03T14:48:00Z",
			"author": "nobody@flickr.com (\"User 11\")",
			"author_id": "11111111@N01",
			"tags": "dog park"
		},
		{
			"title": "Photo 12",
			"link": "https:\/\/www.flickr.com\/photos\/11111111@N02\/53301200012\/",
			"media": {
				"m": "https:\/\/live.staticflickr.com\/65535\/53301200012_abcdef0012_m.jpg"
			},
			"date_taken": "2025-11-03T12:00:00-05:00",
			"description": " <p>photo 12<\/p> ",
			"published": "2025-11-03T14:47:00Z",
			"author": "nobody@flickr.com (\"User 12\")",
			"author_id": "11111111@N02",
			"tags": "cat"
		},
		{
			"title": "Photo 13",
			"link": "https:\/\/www.flickr.com\/photos\/11111111@N03\/53301200013\/",
			"media": {
				"m": "https:\/\/live.staticflickr.com\/65535\/53301200013_abcdef0013_m.jpg"
			},
			"date_taken": "2025-11-03T13:00:00-05:00",
			"description": " <p>photo 13<\/p> ",
			"published": "2025-11-03T14:46:00Z",
			"author": "nobody@flickr.com (\"User 13\")",
			"author_id": "11111111@N03",
			"tags": "dog park"
		},
		{
			"title": "Photo 14",
			"link": "https:\/\/www.flickr.com\/photos\/11111111@N04\/53301200014\/",
			"media": {
				"m": "https:\/\/live.staticflickr.com\/65535\/53301200014_abcdef0014_m.jpg"
			},
			"date_taken": "2025-11-03T14:00:00-05:00",
			"description": " <p>photo 14<\/p> ",
			"published": "2025-11-03T14:45:00Z",
			"author": "nobody@flickr.com (\"User 14\")",
			"author_id": "11111111@N04",
			"tags": "dog park"
		},
		{
			"title": "Photo 15",
			"link": "https:\/\/www.flickr.com\/photos\/11111111@N05\/53301200015\/",
			"media": {
				"m": "https:\/\/live.staticflickr.com\/65535\/53301200015_abcdef0015_m.jpg"
			},
			"date_taken": "2025-11-03T15:00:00-05:00",
			"description": " <p>photo 15<\/p> ",
			"published": "2025-11-03T14:44:00Z",
			"author": "nobody@flickr.com (\"User 15\")",
			"author_id": "11111111@N05",
			"tags": "cat"
		},
		{
			"title": "Photo 16",
			"link": "https:\/\/www.flickr.com\/photos\/11111111@N06\/53301200016\/",
			"media": {
				"m": "https:\/\/live.staticflickr.com\/65535\/53301200016_abcdef0016_m.jpg"
			},
			"date_taken": "2025-11-03T16:00:00-05:00",
			"description": " <p>photo 16<\/p> ",
			"published": "2025-11-03T14:43:00Z",
			"author": "nobody@flickr.com (\"User 16\")",
			"author_id": "11111111@N06",
			"tags": "dog park"
		},
		{
			"title": "Photo 17",
			"link": "https:\/\/www.flickr.com\/photos\/11111111@N07\/53301200017\/",
			"media": {
				"m": "https:\/\/live.staticflickr.com\/65535\/53301200017_abcdef0017_m.jpg"
			},
			"date_taken": "2025-11-03T17:00:00-05:00",
			"description": " <p>photo 17<\/p> ",
			"published": "2025-11-03T14:42:00Z",
			"author": "nobody@flickr.com (\"User 17\")",
			"author_id": "11111111@N07",
			"tags": "dog park"
		},
		{
			"title": "Photo 18",
			"link": "https:\/\/www.flickr.com\/photos\/11111111@N08\/53301200018\/",
			"media": {
				"m": "https:\/\/live.staticflickr.com\/65535\/53301200018_abcdef0018_m.jpg"
			},
			"date_taken": "2025-11-03T18:00:00-05:00",
			"description": " <p>photo 18<\/p> ",
			"published": "2025-11-03T14:41:00Z",
			"author": "nobody@flickr.com (\"User 18\")",
			"author_id": "11111111@N08",
			"tags": "cat"
		},
		{
			"title": "Photo 19",
			"link": "https:\/\/www.flickr.com\/photos\/11111111@N09\/53301200019\/",
			"media": {
				"m": "https:\/\/live.staticflickr.com\/65535\/53301200019_abcdef0019_m.jpg"
			},
			"date_taken": "2025-11-03T19:00:00-05:00",
			"description": " <p>photo 19<\/p> ",
			"published": "2025-11-03T14:40:00Z",
			"author": "nobody@flickr.com (\"User 19\")",
			"author_id": "11111111@N09",
			"tags": "dog park"
		}
	]
})